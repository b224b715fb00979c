// Package onion builds LLM agents whose tools are plain Go.
//
// # Tools
//
// A documented Go function is a tool. NewAgent (and NewTool, ToolsFrom)
// accept:
//
//   - a func with positional parameters, func Search(query string, limit int) ([]string, error):
//     parameter names and the description come from the Go source, found
//     through the runtime, or from facts the oniondoc generator registered
//     for binaries shipped without source;
//   - a func with one struct argument, optionally after a context.Context:
//     the fields are the parameters, named by their json tags and described
//     by a doc:"..." tag, invopop's jsonschema:"description=..." or their doc
//     comment; jsonschema keywords such as enum=, default=, minimum= count;
//   - a pointer to a struct: every exported method declared on its type is
//     a tool sharing the instance (promoted methods, Close and String are
//     not), and Agent.Close closes an instance that is an io.Closer;
//   - a *Tool or []*Tool, built with NewTool and ToolOptions, with
//     NewTypedTool (a func(context.Context, In) (Out, error) called without
//     reflection, the fastest path), or with NewRawTool (a ready JSON Schema
//     and a handler of raw JSON, for tools known only at run time, such as
//     a remote MCP server's).
//
// The tool name is the snake_case Go name (CreateTicket → create_ticket).
// The description is the first paragraph of the doc comment, without the
// Go name it starts with, since the model is sent the tool's name beside it
// ("Weather reports the weather" is sent as "Reports the weather"). A
// paragraph of "name: text" lines describes parameters. Lines "onion:..." are
// directives, never sent to the model. Schemas are derived once per Go type
// and cached; a named string or integer type with constants declared in its
// package becomes an enum.
//
// Arguments are checked before the Go function runs: the call decodes the
// JSON straight into the Go values, checking types, required and unknown
// fields, enums and bounds on the way, and a full JSON Schema validator
// explains a rejection, naming every offending field. The result is sent
// as it is when it is a string, else as the JSON encoding/json writes for
// it, HTML escaping off. Tool.Call runs a tool exactly as the model path does, with no
// model at all; Tool.Run returns the Go value.
//
// Binaries shipped without their source (built with -trimpath, or run far
// from the module) keep their tools' names and descriptions when the
// package runs the generator, from a //go:generate line:
//
//	//go:generate go run github.com/onionkit/onion/cmd/oniondoc
//
// It writes oniondoc_gen.go, which registers the same facts at init with
// package srcdoc. Where the source is at hand at the paths the build
// recorded (a build without -trimpath) it wins over them, even when they
// are stale (oniondoc -check reports that); source anywhere else, such as
// a module in the working directory, is never read. Where neither is, a
// tool is refused unless its options say its description, intent and
// approval. The generated file also lets the exported funcs and methods of
// its package be called without reflection: a tool made of one by NewTool
// or ToolsFrom costs what one made by NewTypedTool does.
//
// # Directives
//
// Directives go in the doc comment, Go directive style (Example_directives
// runs these):
//
//	// Balance returns the balance of an account.
//	//
//	//onion:intent read
//	func Balance(account string) (int, error) { return balances[account], nil }
//
//	// Charge takes money from an account; safe to retry with the same call.
//	//
//	//onion:idempotent
//	func Charge(ctx context.Context, c ChargeRequest) error {
//		balances[c.Account] -= c.Cents
//		return nil
//	}
//
//	// Refund pays money back.
//	//
//	//onion:approve
//	func Refund(ctx context.Context, r RefundRequest) error {
//		balances[r.Account] += r.Cents
//		return nil
//	}
//
// onion:intent takes read, write (the default) or delete. The ToolOptions
// Intent (Read, Write, Delete), Idempotent, RequireApproval and ApproveIf
// say the same for NewTool.
//
// # The loop
//
// Agent.Run sends the prompt to the agent's model and runs the tool calls
// the model asks for, round after round, up to MaxIterations; then it asks
// once more without tools for an answer from the evidence. Unknown tools,
// arguments that do not fit, tool errors, panics and timeouts all go back
// to the model as tool messages, each held to MaxToolOutput; only the
// model endpoint (after retries), a hook's error or the caller's context
// end a run early, and even then every call ends with an Outcome.
//
// The calls of one response run in the order the model listed them,
// except that consecutive reads run together, at most MaxParallel at once:
// a read waits for every write listed before it, a write waits for every
// call listed before it, and reads start in the model's order. Once a
// write or delete fails, is denied or ends with an unknown outcome, the
// later writes of the response are skipped with a message beginning "the
// tool did not run, so it is safe to call again". Calls that need approval
// wait for the Approver; without one, or when it fails, they are denied,
// and ToolCall.Error says why. A failed read or idempotent write is tried
// again up to ToolRetries times; arguments that failed the check never
// are. A tool reads its Call, including an IdempotencyKey stable across
// retries, with CallInfo.
//
// These rules are package loop: a deterministic state machine that takes
// a run's State and the outcome of the last effect and returns the next
// effects (ask the model, ask approval for a call, run a call, emit an
// event, finish), with no goroutines, clock, randomness or I/O inside, and
// a State that encodes to JSON. Run and Stream drive it with goroutines,
// the clock, hooks, the logger and the approver; another runtime, such as
// a durable workflow engine, drives the same loop with the same model
// (Agent.LanguageModel) and runs each call the one way there is
// (drive.CallConfig.Approve and .Attempt, or drive.RunCall for a single call
// outside a loop): package drive holds what only such a runtime needs.
//
// # Conversations
//
// An Agent holds its model, tools and settings, and no conversation: each
// Agent.Run starts afresh, so one Agent serves many users at once. A
// Conversation, made by Agent.NewConversation, runs each prompt after the
// history so far and adds the turn when the run ends with an answer. It
// encodes to and from JSON (MarshalHistory, UnmarshalHistory), and a
// durable run continues the same value (temporal.RunIn).
//
// # Typed answers and token budgets
//
// Ask runs a prompt with the agent's tools and returns the final answer as
// a Go value of the type asked for: its schema, derived as a struct
// argument's is, goes with every request as strict structured output, the
// answer is checked like tool arguments, and an answer that does not fit
// gets one corrective turn before an AnswerError. The option TokenBudget
// bounds the tokens of a run: each request says how much is left, and once
// another round of tool calls would not fit, the model answers without
// tools (StopBudget).
//
// # Models
//
// The agent speaks onion's own Message, Request and Response to a
// LanguageModel, whose one method sends one request. The default is
// package openai's client, Chat Completions for any OpenAI-compatible
// endpoint, built from Model, BaseURL and APIKey or the environment;
// WithModel plugs in any other implementation. Each provider is a package
// of its own beside package onion, importing no package of onion but
// loop, and registers its name prefix when imported, as a database/sql
// driver registers its name: a model named "anthropic/claude-sonnet-4-5"
// or "gemini/gemini-2.5-flash" opens that provider. A model reports
// failures the agent may retry, and a server's Retry-After, with a
// ModelError; the agent retries with backoff, and never waits longer than
// MaxRetryAfter.
//
// # Packages
//
// What a user types is in package onion; the rest stands beside it:
//
//   - loop: the agent's deterministic core, and the types every provider
//     speaks (Message, Request, Response, LanguageModel, the retry rule,
//     the provider registry);
//   - openai, anthropic, gemini: the providers;
//   - drive: what a runtime other than Run and Stream needs to drive an
//     agent's loop itself;
//   - oniontest: a real model server, speaking every provider's wire,
//     for tests, with recording and playback;
//   - builtin (and builtin/webfetch, builtin/browser): ready tools;
//   - mcp/mcpclient and mcp/mcpserver: MCP tools in, onion tools out;
//   - script: tools written in Starlark;
//   - telemetry: OpenTelemetry traces and metrics;
//   - automation: scheduled runs;
//   - temporal, a module of its own: durable runs on Temporal;
//   - cmd/onion: the onion command; cmd/oniondoc and srcdoc: doc
//     comments compiled into binaries that run without their source.
//
// # The Responses API
//
// The built-in client speaks Chat Completions; with the option
// ResponsesAPI it speaks the Responses API (POST /v1/responses) instead,
// streamed or not. It is stateless: store is false, a reasoning model's
// reasoning is asked for encrypted, and each response's output items,
// reasoning items among them, go back as they came in the following
// requests. ChainResponses keeps the conversation on the server instead,
// with previous_response_id.
//
// Package oniontest is a real model server, OpenAI's Chat Completions and
// Responses API, Anthropic's Messages API and the Gemini API, for testing
// agents.
package onion
