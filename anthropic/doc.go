// Package anthropic is onion's provider for Anthropic's Messages API
// (POST /v1/messages), through the official Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2). A *Model is a
// loop.LanguageModel, and so an onion.LanguageModel (here on oniontest's
// Messages API, as the package example runs it; without BaseURL and
// APIKey, New reads ANTHROPIC_API_KEY and sends to api.anthropic.com):
//
//	m, err := anthropic.New("claude-sonnet-4-5", anthropic.BaseURL(s.AnthropicURL()), anthropic.APIKey("sk-ant-example"))
//	if err != nil {
//		panic(err)
//	}
//	agent, err := onion.NewAgent("geo", onion.WithModel(m), onion.SystemPrompt("Answer in one word."))
//
// Importing the package registers the prefix "anthropic" (see
// loop.Register), the way a database/sql driver registers itself, so that
// an agent can also name its model: onion.Model("anthropic/claude-sonnet-4-5")
// or ONION_MODEL=anthropic/claude-sonnet-4-5, with ANTHROPIC_API_KEY (and,
// for an Anthropic-compatible server, ANTHROPIC_BASE_URL) from the
// environment. A Model checks an agent's tools when the agent is made
// (CheckTools): a tool the API would refuse fails there, named.
//
// # What travels on the wire
//
// The system message goes as "system"; tools go with their JSON Schema as
// "input_schema"; a call is a tool_use block and its result a tool_result
// block, the results of one reply's calls going back together in one user
// message, in the order of the calls. Images in a prompt and images a tool
// returned go as image blocks (base64 bytes or a URL). A typed answer
// (onion.Ask) goes as output_config.format, Anthropic's structured
// output: the answer is JSON text that fits the schema, whose keywords
// Anthropic does not take are moved into the descriptions (onion still
// checks them when the answer comes back).
//
// A reply is read from the SDK's event stream when the caller streams, or
// whole: text, thinking (extended thinking, see Thinking and
// AdaptiveThinking) and tool calls, whose arguments are assembled from
// their input_json_delta events. Thinking blocks come with a signature the
// API checks when they are sent back, and redacted_thinking blocks are
// opaque: a reply that holds either keeps its content blocks in
// loop.Message.Items (ItemsFrom "anthropic"), and the next request sends
// them back byte for byte.
//
// # Prompt caching
//
// Each request marks up to four cache breakpoints (cache_control
// ephemeral): the last tool, the system prompt, the last block of the
// newest turn and the last block of the turn before it, where the previous
// request put its newest. The requests of a run are written so that each
// is the one before it plus the new turns: tools, system prompt and earlier
// turns are the same bytes, the breakpoint markers aside, so the prefix
// the previous request wrote to the cache is read back. The last request
// of a run capped by MaxIterations or its token budget, which the loop
// sends without tools, keeps the run's tools, with tool_choice none after
// the messages. CacheTTL sets the
// cache's lifetime, NoCache turns the breakpoints off. The usage of a
// response reports what was read (loop.Usage.CachedTokens) and written
// (CacheWriteTokens); PromptTokens counts all input tokens, cached or not.
//
// # Failures
//
// Every error is a *loop.ModelError naming the API and its URL (never the
// key): a 429 (with its retry-after), a 529 "overloaded", a 408 and a 5xx
// may pass when sent again; a 400, 401, 403 or 404 will not. An error event
// in the middle of a stream (overloaded_error, api_error) is retryable when
// no text had been passed on yet. A reply cut by max_tokens has the
// FinishReason "max_tokens", one cut by the end of the context window
// "model_context_window_exceeded" (both loop.Response.Cut), and a tool
// call cut with it keeps its arguments as they came, which the loop does
// not run.
package anthropic
