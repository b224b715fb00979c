package onion

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onionkit/onion/loop"
)

// This file is the agent's side of the model: the LanguageModel interface
// any wire implements, and the types it speaks, which are the loop's own.

// LanguageModel is a model endpoint the agent sends requests to: one
// request, one reply. The built-in implementation speaks Chat Completions
// through go-openai; WithModel plugs in any other, such as a provider's own
// API, a local model or a test double.
//
// Generate sends req once; the agent retries failed requests itself (see
// ModelError). When onDelta is not nil the caller wants the reply as it is
// made: Generate should then stream and call onDelta with each piece of
// text, from the goroutine that called Generate and before it returns. A
// LanguageModel that cannot stream may ignore onDelta. Either way the
// returned Response holds the whole reply.
//
// Generate must not keep req or its messages after it returns.
type LanguageModel interface {
	Generate(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// ErrNoModel is the error of a run of an agent that has no model to ask:
// neither an API key nor a base URL (OPENAI_API_KEY, OPENAI_BASE_URL,
// APIKey, BaseURL), nor a client or model of the program's (WithClient,
// WithModel). NewAgent accepts such an agent, so that its tools can be
// listed and called directly; its first run fails with this error, before
// any request, saying what to set.
var ErrNoModel = errors.New("no model configured: set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL for a local OpenAI-compatible server (llama.cpp's llama-server, Ollama, vLLM), e.g. OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2")

// noModel is the model of an agent that has none: it says so, once.
func noModel(context.Context, *Request, func(Delta)) (*Response, error) {
	return nil, &ModelError{Err: ErrNoModel}
}

// ModelFunc turns a function into a LanguageModel.
type ModelFunc func(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	return f(ctx, req, onDelta)
}

// Delta is the next piece of a reply being streamed.
type Delta struct {
	Text      string // the next piece of the answer's text
	Reasoning string // the next piece of the reasoning text, for models that show it
}

// The conversation types. They are defined in package loop, the agent's
// deterministic core, and are the same types here.
type (
	// Message is one message of a conversation: see loop.Message.
	Message = loop.Message
	// Role says who wrote a message.
	Role = loop.Role
	// ToolRequest is one tool call as the model asked for it.
	ToolRequest = loop.ToolRequest
	// ToolDef is a tool as the model is told of it.
	ToolDef = loop.ToolDef
	// Request is one request to a LanguageModel.
	Request = loop.Request
	// Response is a LanguageModel's reply to one Request.
	Response = loop.Response
)

// The roles of a conversation.
const (
	RoleSystem    = loop.RoleSystem
	RoleUser      = loop.RoleUser
	RoleAssistant = loop.RoleAssistant
	RoleTool      = loop.RoleTool
)

// ModelError is a failed model request, described so that the agent knows
// whether to send it again. The built-in wires return one for every
// failure, wrapping the client library's error (still reachable with
// errors.As, such as *openai.APIError); a user's LanguageModel may return
// one to have its requests retried. An error that is not a ModelError is
// retried only when it is a network error.
type ModelError struct {
	// StatusCode is the HTTP status of the reply, 0 when none came.
	StatusCode int
	// Retryable says the same request may succeed if sent again: a rate
	// limit, a server error, a connection lost before the reply.
	Retryable bool
	// RetryAfter is how long the server asked to wait (its Retry-After
	// header), 0 when it did not say. The agent waits that long instead of
	// its backoff, up to MaxRetryAfter.
	RetryAfter time.Duration
	// Err is what went wrong, in the server's words when it gave any.
	Err error
}

func (e *ModelError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("model request failed with status %d", e.StatusCode)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *ModelError) Unwrap() error { return e.Err }

// WithModel makes the agent send its requests to m instead of the
// built-in Chat Completions client; Model, BaseURL, APIKey and WithClient
// are then ignored.
func WithModel(m LanguageModel) Option {
	return optionFunc(func(c *config) error {
		if m == nil {
			return fmt.Errorf("onion.WithModel(nil): give a LanguageModel")
		}
		c.languageModel = m
		return nil
	})
}
