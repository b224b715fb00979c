package loop_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onionkit/onion/loop"
)

// registered counts the prefixes the tests register: the registry is the
// process's, so a test run again (-count=2) needs a prefix of its own.
var registered atomic.Int64

func TestRegisterLookup(t *testing.T) {
	var got string
	prefix := fmt.Sprintf("test-registry-%d", registered.Add(1))
	loop.Register(prefix, func(model string) (loop.LanguageModel, error) {
		got = model
		return loop.ModelFunc(func(context.Context, *loop.Request, func(loop.Delta)) (*loop.Response, error) {
			return &loop.Response{}, nil
		}), nil
	})
	if !slices.Contains(loop.Providers(), prefix) {
		t.Fatalf("Providers() = %v, want %s in it", loop.Providers(), prefix)
	}
	open, model, ok := loop.Lookup(prefix + "/some/model")
	if !ok || model != "some/model" {
		t.Fatalf("Lookup = %v %q, want ok and some/model", ok, model)
	}
	if _, err := open(model); err != nil || got != "some/model" {
		t.Fatalf("open: %v, model %q", err, got)
	}
	for _, name := range []string{"gpt-4o-mini", "meta-llama/llama-3", "/x", ""} {
		if _, _, ok := loop.Lookup(name); ok {
			t.Errorf("Lookup(%q) found a provider", name)
		}
	}
	for _, bad := range []string{"", "a/b", prefix} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", bad)
				}
			}()
			loop.Register(bad, func(string) (loop.LanguageModel, error) { return nil, nil })
		}()
	}
}

func TestRetryRule(t *testing.T) {
	for status, want := range map[int]bool{429: true, 408: true, 500: true, 529: true, 400: false, 401: false, 404: false} {
		if got := loop.RetryableStatus(status); got != want {
			t.Errorf("RetryableStatus(%d) = %v", status, got)
		}
	}
	if r, _ := loop.Retryable(context.Canceled); r {
		t.Error("a cancelled request is retried")
	}
	if r, _ := loop.Retryable(io.ErrUnexpectedEOF); !r {
		t.Error("a cut reply is not retried")
	}
	r, after := loop.Retryable(&loop.ModelError{StatusCode: 529, Retryable: true, RetryAfter: time.Second})
	if !r || after != time.Second {
		t.Errorf("ModelError: %v %v", r, after)
	}
	if r, _ := loop.Retryable(errors.New("bad request")); r {
		t.Error("a plain error is retried")
	}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if d := loop.ParseRetryAfter(now.Add(3*time.Second).Format(http.TimeFormat), now); d != 3*time.Second {
		t.Errorf("HTTP date: %v", d)
	}
	if d := loop.ParseRetryAfter(" 2 ", now); d != 2*time.Second {
		t.Errorf("seconds: %v", d)
	}
}

// TestCut: every provider's reason for a reply stopped short is a cut,
// and no other reason is.
func TestCut(t *testing.T) {
	cut := []string{"length", "max_output_tokens", "max_tokens", "MAX_TOKENS", "model_context_window_exceeded"}
	whole := []string{"stop", "tool_calls", "end_turn", "tool_use", "STOP", "content_filter", "refusal", "pause_turn", ""}
	for _, r := range cut {
		if !(&loop.Response{FinishReason: r}).Cut() {
			t.Errorf("a reply stopped by %q is not cut", r)
		}
	}
	for _, r := range whole {
		if (&loop.Response{FinishReason: r}).Cut() {
			t.Errorf("a reply stopped by %q is cut", r)
		}
	}
}
