package telemetry

import "go.opentelemetry.io/otel/attribute"

// The attribute keys onion sets. The gen_ai keys are those of the GenAI
// semantic conventions as go.opentelemetry.io/otel/semconv/v1.41.0 spells
// them; the onion keys are onion's own.
const (
	OperationName        = attribute.Key("gen_ai.operation.name")
	ProviderName         = attribute.Key("gen_ai.provider.name")
	RequestModel         = attribute.Key("gen_ai.request.model")
	RequestTemperature   = attribute.Key("gen_ai.request.temperature")
	ResponseID           = attribute.Key("gen_ai.response.id")
	ResponseModel        = attribute.Key("gen_ai.response.model")
	ResponseFinish       = attribute.Key("gen_ai.response.finish_reasons")
	InputTokens          = attribute.Key("gen_ai.usage.input_tokens")
	OutputTokens         = attribute.Key("gen_ai.usage.output_tokens")
	CacheReadInputTokens = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	ReasoningTokens      = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	AgentName            = attribute.Key("gen_ai.agent.name")
	ConversationID       = attribute.Key("gen_ai.conversation.id")
	ToolName             = attribute.Key("gen_ai.tool.name")
	ToolCallID           = attribute.Key("gen_ai.tool.call.id")
	ToolDescription      = attribute.Key("gen_ai.tool.description")
	ToolType             = attribute.Key("gen_ai.tool.type")
	TokenType            = attribute.Key("gen_ai.token.type")
	ErrorType            = attribute.Key("error.type")
	ServerAddress        = attribute.Key("server.address")
	ServerPort           = attribute.Key("server.port")

	// Content, recorded only with CaptureContent.
	InputMessages      = attribute.Key("gen_ai.input.messages")
	OutputMessages     = attribute.Key("gen_ai.output.messages")
	SystemInstructions = attribute.Key("gen_ai.system_instructions")
	ToolDefinitions    = attribute.Key("gen_ai.tool.definitions")
	ToolCallArguments  = attribute.Key("gen_ai.tool.call.arguments")
	ToolCallResult     = attribute.Key("gen_ai.tool.call.result")

	// onion's own.
	ToolIntent    = attribute.Key("onion.tool.intent")
	ToolOutcome   = attribute.Key("onion.tool.outcome")
	ToolAttempts  = attribute.Key("onion.tool.attempts")
	RunID         = attribute.Key("onion.run.id")
	RunStopReason = attribute.Key("onion.run.stop_reason")
	RetryAttempt  = attribute.Key("onion.retry.attempt")
	RetryWait     = attribute.Key("onion.retry.wait")
)

// The values of gen_ai.operation.name onion uses.
const (
	OperationInvokeAgent = "invoke_agent"
	OperationChat        = "chat"
	OperationExecuteTool = "execute_tool"
)
