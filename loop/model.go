package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file is the model's side of the loop: the LanguageModel interface
// every provider implements (package openai, anthropic, gemini, a user's
// own), the error it returns when a request fails, the rule every provider
// and runtime retries by, and the registry that finds a provider by the
// prefix of a model's name. Provider packages import package loop alone,
// so everything they share lives here.

// LanguageModel is a model endpoint an agent sends requests to: one
// request, one reply. Package onion re-exports it as onion.LanguageModel.
//
// Generate sends req once; the caller retries failed requests itself (see
// ModelError and Retryable). When onDelta is not nil the caller wants the
// reply as it is made: Generate should then stream and call onDelta with
// each piece of text, from the goroutine that called Generate and before
// it returns. A LanguageModel that cannot stream may ignore onDelta.
// Either way the returned Response holds the whole reply.
//
// Generate must not keep req or its messages after it returns, nor change
// them: the loop builds each request of a run in the same buffer, and its
// messages are valid until Generate returns.
type LanguageModel interface {
	Generate(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
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

// ModelError is a failed model request, described so that the caller
// knows whether to send it again. Every provider package returns one for
// every failure, wrapping the client library's error (still reachable with
// errors.As); a user's LanguageModel may return one to have its requests
// retried. An error that is not a ModelError is retried only when it is a
// network error.
type ModelError struct {
	// StatusCode is the HTTP status of the reply, 0 when none came.
	StatusCode int
	// Retryable says the same request may succeed if sent again: a rate
	// limit, an overloaded or failing server, a connection lost before the
	// reply.
	Retryable bool
	// RetryAfter is how long the server asked to wait (its Retry-After
	// header, or the provider's own field for it), 0 when it did not say.
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

// RetryableStatus is the rule for an HTTP status every provider shares: a
// rate limit (429), a timeout (408) and a server error (5xx, Anthropic's
// 529 "overloaded" among them) may pass when sent again; any other client
// error will not.
func RetryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
}

// Retryable reports whether a failed model request, err being what
// LanguageModel.Generate returned, may succeed if sent again, and how long
// the server asked to wait first (0 when it did not say). A *ModelError
// says it itself; otherwise only a network failure (a lost connection, a
// reply cut short) is retryable, never the caller's own cancellation or
// deadline.
func Retryable(err error) (retry bool, after time.Duration) {
	var me *ModelError
	if errors.As(err, &me) {
		return me.Retryable, me.RetryAfter
	}
	return NetworkRetryable(err), 0
}

// NetworkRetryable reports whether err is a network failure that may not
// happen again: a lost connection, a reply cut short. The caller's own
// cancellation or deadline is not.
func NetworkRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection reset")
}

// ParseRetryAfter reads a Retry-After header, seconds or an HTTP date, at
// now; "" or a value it cannot read is 0. A wait too long for a
// time.Duration is the longest one.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		if s >= math.MaxInt64/float64(time.Second) {
			return math.MaxInt64
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// A Provider opens a LanguageModel for a model name without its prefix
// ("claude-sonnet-4-5" of "anthropic/claude-sonnet-4-5"), configured from
// the provider's environment variables (its API key, its base URL).
type Provider func(model string) (LanguageModel, error)

var (
	providersMu sync.RWMutex
	providers   = map[string]Provider{}
)

// Register makes a provider available under prefix, the way database/sql
// drivers register: a provider package calls it from its init, so that
// importing the package (even as _) lets an agent name its models as
// "prefix/model". It panics when prefix is empty, holds a '/', or is
// registered twice, and when p is nil.
func Register(prefix string, p Provider) {
	if prefix == "" || strings.Contains(prefix, "/") {
		panic(fmt.Sprintf("loop.Register(%q): a prefix is a non-empty name without '/'", prefix))
	}
	if p == nil {
		panic(fmt.Sprintf("loop.Register(%q): nil Provider", prefix))
	}
	providersMu.Lock()
	defer providersMu.Unlock()
	if _, dup := providers[prefix]; dup {
		panic(fmt.Sprintf("loop.Register(%q): registered twice", prefix))
	}
	providers[prefix] = p
}

// Providers returns the registered prefixes, sorted.
func Providers() []string {
	providersMu.RLock()
	defer providersMu.RUnlock()
	out := make([]string, 0, len(providers))
	for p := range providers {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the provider registered for the prefix of name, the part
// before its first '/', and the rest of the name; ok is false when name
// has no prefix or its prefix is not registered.
func Lookup(name string) (p Provider, model string, ok bool) {
	prefix, model, found := strings.Cut(name, "/")
	if !found {
		return nil, "", false
	}
	providersMu.RLock()
	p, ok = providers[prefix]
	providersMu.RUnlock()
	return p, model, ok
}

// ToolChecker is a LanguageModel that can tell, before any request,
// whether it can send an agent's tools: a provider whose API takes only a
// subset of JSON Schema implements it, and an agent built with such a model
// checks its tools once, when it is made, so that a schema the API would
// refuse fails there with the tool and the keyword named, not at the first
// request.
type ToolChecker interface {
	CheckTools(defs []ToolDef) error
}
