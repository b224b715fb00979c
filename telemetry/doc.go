// Package telemetry traces and measures an onion agent with OpenTelemetry,
// named and attributed as the GenAI semantic conventions say.
//
// Pass Option to onion.NewAgent and each run becomes a tree of spans:
//
//	invoke_agent {agent}          INTERNAL
//	├── chat {model}              CLIENT, one per model request; retries are events
//	└── execute_tool {tool}       INTERNAL, one per tool call
//
// A span around Run is the parent of invoke_agent, and execute_tool is in
// the tool's context, so that an instrumented HTTP client inside a tool
// (otelhttp) makes its span a child of the call. The meter records
// gen_ai.client.token.usage and gen_ai.client.operation.duration, and
// counts tool calls by outcome in onion.tool.calls.
//
// A durable run (package github.com/onionkit/onion/temporal) makes the
// same tree: invoke_agent and execute_tool on the worker that runs the
// workflow, never while it replays, and each chat in its model activity,
// on any worker, under the run's span carried in Temporal's headers
// (AttachRun gives it the run's attributes).
//
// Prompts, replies, arguments and results are content: they are recorded
// only with CaptureContent. The API key never is.
//
// The package depends only on the OpenTelemetry API; the program chooses
// the SDK and the exporters. The conventions are in Development status;
// the attribute names here follow go.opentelemetry.io/otel/semconv/v1.41.0,
// the last release of the Go module that has them.
package telemetry
