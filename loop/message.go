package loop

import "encoding/json"

// This file holds the conversation as the loop keeps it and the model
// reads it: messages, tool definitions, one request and one response. They
// are onion's own types, not any client library's, so that any wire (Chat
// Completions, the Responses API, a user's own Model) can carry them, and
// they encode to JSON and back unchanged.

// Role says who wrote a message.
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"    // the agent's instructions
	RoleUser      Role = "user"      // the person, or the program, asking
	RoleAssistant Role = "assistant" // the model
	RoleTool      Role = "tool"      // the result of one tool call
)

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Message is one message of a conversation. An assistant message may carry
// text, reasoning and tool calls at once; a tool message answers one call,
// named by ToolCallID.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of the message.
	Content string `json:"content,omitempty"`
	// Reasoning is the reasoning text the model showed, when it showed any
	// (Chat Completions' reasoning_content or reasoning, the Responses
	// API's reasoning text or summary).
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls an assistant message asks for, in the
	// model's order.
	ToolCalls []ToolRequest `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name on a tool message.
	Name string `json:"name,omitempty"`
	// ToolError marks a tool message whose call failed (Failed, or
	// OutcomeUnknown: cut off mid-run): Content then says what went
	// wrong. Anthropic's wire sends it as the tool_result's is_error,
	// Gemini's puts the text under "error" rather than "output"; Chat
	// Completions and the Responses API have no such mark, and their
	// models read it in the text alone.
	ToolError bool `json:"tool_error,omitempty"`
	// Items are provider items that must travel back to the same provider
	// verbatim, kept as the provider sent them: the Responses API's output
	// items (reasoning items with their encrypted content among them) are
	// stored here as a JSON array. A wire that finds items it wrote sends
	// them instead of rebuilding them from the fields above; any other wire
	// ignores them.
	Items json.RawMessage `json:"items,omitempty"`
	// ItemsFrom names the wire that wrote Items: "anthropic", "gemini",
	// "openai-chat" (Chat Completions, which notes there the member its
	// reasoning came in when a server used "reasoning", each tool call's
	// extra_content, as Gemini 3's signed calls, and OpenRouter's
	// reasoning_details), or "" for the Responses API (which wrote them
	// before this field was added). A wire uses Items only when they are
	// its own.
	ItemsFrom string `json:"items_from,omitempty"`
	// ResponseID is the provider's ID of the response that produced an
	// assistant message, for wires that can continue from it.
	ResponseID string `json:"response_id,omitempty"`
	// Images are pictures the message carries besides its text: on a user
	// message, images in the prompt; on a tool message, images the tool
	// returned, which the model is shown (each wire as its provider
	// documents).
	Images []Image `json:"images,omitempty"`
}

// Image is a picture in a message: its bytes with their MIME type, or a
// URL the provider fetches itself.
type Image struct {
	// MIMEType is the type of Data, such as "image/png" or "image/jpeg".
	MIMEType string `json:"mime_type,omitempty"`
	// Data is the image's bytes (base64 in JSON); empty when URL is set.
	Data []byte `json:"data,omitempty"`
	// URL is where the image is, for a provider to fetch; empty when Data
	// is set.
	URL string `json:"url,omitempty"`
}

// MaxCallID bounds a tool call's ID. Providers give IDs of a few dozen
// bytes; a model's text that is longer, or holds anything but printable
// ASCII, is not taken for an ID: the loop gives the call one of its own.
const MaxCallID = 256

// usableID reports whether id, a model's, may stand as a call's ID.
func usableID(id string) bool {
	if id == "" || len(id) > MaxCallID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// ToolRequest is one tool call as the model asked for it.
type ToolRequest struct {
	// ID is the model's ID of the call; a tool message answers it by this
	// ID. The loop gives one to a call that came without, or with one it
	// cannot use (see MaxCallID) or used twice.
	ID string `json:"id"`
	// Name is the tool's name, as the model sent it.
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments, as the model sent it
	// (which may not be valid JSON).
	Arguments string `json:"arguments"`
}

// ToolDef is a tool as the model is told of it.
type ToolDef struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage `json:"parameters"`
	// Strict asks the provider to hold the model to the schema exactly
	// (OpenAI's strict mode); Parameters is then the strict form.
	Strict bool `json:"strict,omitempty"`
}

// Request is one request to the model: the whole conversation, system
// instructions first, and the tools it may call. In a request the loop
// makes, Messages share the run's request buffer: see Effect.Request.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	// Tools is empty when the model must answer without calling tools, as
	// in the last request after the cap.
	Tools       []ToolDef `json:"tools,omitempty"`
	Temperature *float32  `json:"temperature,omitempty"`
	// Format is the shape the answer must take, in a run whose final
	// answer is typed; nil for free text. A wire sends it as structured
	// output (Chat Completions' response_format, the Responses API's
	// text.format).
	Format *Format `json:"format,omitempty"`
}

// Response is the model's reply to one Request.
type Response struct {
	// ID is the provider's ID of the response, when it gave one.
	ID string `json:"id,omitempty"`
	// Model is the model that answered, as the provider named it.
	Model string `json:"model,omitempty"`
	// Message is the reply, with the role RoleAssistant.
	Message Message `json:"message"`
	// FinishReason is why the model stopped, in the provider's words
	// (stop, tool_calls, length, content_filter, …), when it said.
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage is what the request cost.
	Usage Usage `json:"usage"`
}

// Cut reports whether the reply was cut by the model's output token limit
// (Chat Completions' finish_reason "length", the Responses API's
// incomplete reason "max_output_tokens", Anthropic's stop_reason
// "max_tokens", Gemini's finishReason "MAX_TOKENS") or by the end of its
// context window (Anthropic's "model_context_window_exceeded"): its text
// may stop mid-sentence and its last tool call mid-arguments.
func (r *Response) Cut() bool {
	switch r.FinishReason {
	case "length", "max_output_tokens", "max_tokens", "MAX_TOKENS", "model_context_window_exceeded":
		return true
	}
	return false
}

// Refused reports whether the provider stopped the reply for safety or
// policy rather than letting the model answer: OpenAI's content_filter
// (both APIs), Anthropic's refusal, and Gemini's SAFETY, RECITATION,
// BLOCKLIST, PROHIBITED_CONTENT, SPII and their kinds for images. An
// OpenAI reply that holds a refusal (Chat Completions' refusal member,
// the Responses API's refusal part) has the finish reason "refusal" too,
// its refusal as its text. Its text, if any, is not an answer, and its
// tool calls are not run.
func (r *Response) Refused() bool {
	switch r.FinishReason {
	case "content_filter", "refusal", "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return true
	}
	return false
}

// Usage counts tokens: of one response, or summed over a run.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`     // tokens sent
	CompletionTokens int `json:"completion_tokens"` // tokens generated, reasoning included
	TotalTokens      int `json:"total_tokens"`      // as the endpoint counts them
	// CachedTokens are the prompt tokens served from the provider's cache,
	// when it reports them.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// CacheWriteTokens are the prompt tokens written to the provider's
	// cache by this request, when it reports them (Anthropic does; OpenAI
	// and Gemini cache on their own and report only reads).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens are the completion tokens spent on reasoning, when
	// the provider reports them.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// Requests counts the model requests that succeeded; a Model leaves it
	// 0 and the loop counts.
	Requests int `json:"requests"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.TotalTokens += o.TotalTokens
	u.CachedTokens += o.CachedTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.Requests += o.Requests
}
