package oniontest

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A Step scripts the reply to one request. Steps are consumed in order, one
// per request. Build them with [Text], [ToolCalls], [Error], [RateLimited],
// [Replay] and [Func], and adjust them with the modifier methods; the zero
// Step is not valid.
type Step struct {
	kind  stepKind
	text  string             // stepText; the message of stepStreamError
	code  string             // stepStreamError
	calls []ToolCall         // stepToolCalls; never mutated once built
	raw   rawReply           // stepRaw
	fn    func(Request) Step // stepFunc

	delay          time.Duration
	cut            bool
	cutAfter       int
	noIndex, whole bool
	truncated      bool   // cut by the output token limit
	refused        bool   // stopped by the provider for safety or policy
	usage          *usage // nil: defaultUsage
	rateLimited    bool   // made by RateLimited: each wire words it its own way

	// The Anthropic wire's (anthropic_wire.go).
	thinking              *string // WithThinking
	cacheRead, cacheWrite int     // WithCache
}

type stepKind int

const (
	stepInvalid stepKind = iota
	stepText
	stepToolCalls
	stepRaw
	stepFunc
	stepStreamError
)

// rawReply is a reply served verbatim.
type rawReply struct {
	status      int
	contentType string
	header      http.Header // extra headers; nil for none
	body        []byte
}

// ToolCall is one call the scripted assistant makes. An empty ID makes the
// server assign "call_<n>", unique per server. Arguments is sent as the JSON
// string it is, so it may be deliberately malformed.
type ToolCall struct {
	ID, Name, Arguments string
}

// Call returns a ToolCall of the named function with the given JSON
// arguments and a server-assigned ID.
func Call(name, arguments string) ToolCall {
	return ToolCall{Name: name, Arguments: arguments}
}

// Text returns a Step that answers with assistant text and finish_reason
// "stop". Streamed, the text arrives as one content delta per word.
func Text(content string) Step {
	return Step{kind: stepText, text: content}
}

// ToolCalls returns a Step that answers with an assistant message calling
// the given tools, content null and finish_reason "tool_calls". Streamed,
// each call arrives as a header chunk (index, id, type, name and empty
// arguments) followed by argument fragments of a few bytes.
func ToolCalls(calls ...ToolCall) Step {
	return Step{kind: stepToolCalls, calls: calls}
}

// Error returns a Step that replies with the HTTP status and the raw body,
// served as application/json. Pass an OpenAI error JSON (for example a
// recorded one) to have go-openai return an *openai.APIError.
func Error(status int, body string) Step {
	return ReplayStatus(status, "application/json", []byte(body))
}

// RateLimited returns a Step that replies 429 with a Retry-After header
// (retryAfter in whole seconds, rounded up) and an OpenAI-shaped
// rate_limit_exceeded error body.
func RateLimited(retryAfter time.Duration) Step {
	secs := int64(math.Ceil(max(retryAfter, 0).Seconds()))
	body := errorBody(fmt.Sprintf("Rate limit reached (oniontest). Please try again in %ds.", secs),
		"requests", "rate_limit_exceeded")
	s := ReplayStatus(http.StatusTooManyRequests, "application/json", body)
	s.raw.header = http.Header{"Retry-After": {fmt.Sprint(secs)}}
	s.rateLimited = true
	return s
}

// Replay returns a Step that serves body verbatim with status 200 and the
// given Content-Type ("text/event-stream" or "application/json"), whatever
// the request asked for. Use it for recorded traffic.
func Replay(contentType string, body []byte) Step {
	return ReplayStatus(http.StatusOK, contentType, body)
}

// ReplayFile returns a [Replay] Step serving the file at path. The content
// type is text/event-stream for a ".sse" file and application/json for any
// other. It stops the test if the file cannot be read.
func ReplayFile(t testing.TB, path string) Step {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("oniontest: %v", err)
	}
	contentType := "application/json"
	if filepath.Ext(path) == ".sse" {
		contentType = "text/event-stream"
	}
	return Replay(contentType, body)
}

// ReplayStatus returns a Step that serves body verbatim with the given
// status and Content-Type.
func ReplayStatus(status int, contentType string, body []byte) Step {
	return Step{kind: stepRaw, raw: rawReply{status: status, contentType: contentType, body: body}}
}

// Func returns a Step that decides the reply from the request: fn runs in
// the server's handler goroutine when the step's turn comes, and the Step it
// returns is served. Modifiers set on the Func step apply on top of it.
func Func(fn func(Request) Step) Step {
	if fn == nil {
		panic("oniontest: Func(nil)")
	}
	return Step{kind: stepFunc, fn: fn}
}

// Delay returns a copy of s that waits d before replying. The wait ends
// early, with no reply, when the client goes away or the server is closed,
// so a slow step never outlives the test.
func (s Step) Delay(d time.Duration) Step {
	s.delay += d
	return s
}

// CutAfter returns a copy of s that drops the connection part way through
// the reply. A stream sends n chunks or events (never the final "data:
// [DONE]", nor response.completed) and then breaks off; any other reply
// sends half its body first.
func (s Step) CutAfter(n int) Step {
	s.cut, s.cutAfter = true, max(n, 0)
	return s
}

// NoIndex returns a copy of s whose streamed tool-call deltas carry no
// "index" key, as Ollama and Gemini's OpenAI-compatible endpoint send them.
// On the Responses API it changes nothing.
func (s Step) NoIndex() Step {
	s.noIndex = true
	return s
}

// WithUsage returns a copy of s reporting these token counts in usage
// (total is their sum). Without it a small fixed non-zero usage is sent.
func (s Step) WithUsage(prompt, completion int) Step {
	s.usage = &usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return s
}

// Whole returns a copy of s whose streamed tool calls each arrive whole in
// one chunk, arguments included, as Ollama and Groq send them. On the
// Responses API each call's arguments come only in its
// function_call_arguments.done event, with no deltas, as LM Studio sends
// them.
func (s Step) Whole() Step {
	s.whole = true
	return s
}

// Truncated returns a copy of s that says the reply was cut by the model's
// output token limit, as a server does when max_tokens runs out: on Chat
// Completions with finish_reason "length", on the Responses API with
// status "incomplete" and incomplete_details.reason "max_output_tokens"
// (streamed, a response.incomplete event ends it). The text and arguments
// are sent as given, so a test can cut them where it likes.
func (s Step) Truncated() Step {
	s.truncated = true
	return s
}

// Refused returns a copy of s that says the provider stopped the reply
// for safety or policy, as each wire says it: on Chat Completions with
// finish_reason "content_filter", on the Responses API with status
// "incomplete" and incomplete_details.reason "content_filter", on
// Anthropic's with stop_reason "refusal", on Gemini's with finishReason
// "SAFETY". The text and calls are sent as given.
func (s Step) Refused() Step {
	s.refused = true
	return s
}

// resolve runs Func steps until a concrete step is left, carrying the
// outer modifiers onto the result.
func (s Step) resolve(req Request) Step {
	for s.kind == stepFunc {
		next := s.fn(req)
		next.delay += s.delay
		if s.cut {
			next.cut, next.cutAfter = true, s.cutAfter
		}
		next.noIndex = next.noIndex || s.noIndex
		next.whole = next.whole || s.whole
		next.truncated = next.truncated || s.truncated
		next.refused = next.refused || s.refused
		if s.usage != nil {
			next.usage = s.usage
		}
		if s.thinking != nil {
			next.thinking = s.thinking
		}
		if s.cacheRead != 0 || s.cacheWrite != 0 {
			next.cacheRead, next.cacheWrite = s.cacheRead, s.cacheWrite
		}
		s = next
	}
	return s
}
