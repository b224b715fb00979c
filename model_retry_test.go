package onion_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

// This file is the model retries of a run: Retry-After honoured and
// bounded, and streams cut before or after their text.

func TestRetryAfterIsHonoured(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	s := oniontest.NewServer(t, oniontest.RateLimited(time.Second), oniontest.Text("ok"))
	// The backoff alone would wait milliseconds; the header says a second.
	out, err := newAgent(t, s, onion.Logger(logger)).Input(context.Background(), "hi")
	if err != nil || out != "ok" {
		t.Fatalf("out %q, err %v", out, err)
	}
	if !strings.Contains(buf.String(), `"msg":"model request failed, retrying"`) || !strings.Contains(buf.String(), `"wait":1000000000`) {
		t.Errorf("no retry record waiting the Retry-After second:\n%s", buf.String())
	}
}

func TestStreamCutBeforeTextIsRetried(t *testing.T) {
	// One chunk, the role, then the connection drops: nothing was said yet.
	s := oniontest.NewServer(t, oniontest.Text("lost").CutAfter(1), oniontest.Text("whole answer"))
	var text strings.Builder
	for e, err := range newAgent(t, s).Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(e.Text)
	}
	if text.String() != "whole answer" || len(s.Requests()) != 2 {
		t.Errorf("text %q after %d requests", text.String(), len(s.Requests()))
	}
}

func TestStreamCutMidTextIsNotRepeated(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("one two three four five").CutAfter(3))
	var text strings.Builder
	var err error
	for e, e2 := range newAgent(t, s).Stream(context.Background(), "go") {
		text.WriteString(e.Text)
		if e2 != nil {
			err = e2
		}
	}
	if err == nil || len(s.Requests()) != 1 {
		t.Errorf("err %v after %d requests; a retry would repeat %q", err, len(s.Requests()), text.String())
	}
}

// TestRetryAfterIsBounded: a server asking to wait a day fails the request
// at once, with its own words, instead of stalling the run.
func TestRetryAfterIsBounded(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.RateLimited(24*time.Hour))
	_, err := newAgent(t, s, onion.MaxRetryAfter(time.Minute)).Input(context.Background(), "hi")
	var apiErr *openai.APIError
	if err == nil || !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 {
		t.Fatalf("err = %v, want the 429 wrapped", err)
	}
	for _, want := range []string{"24h0m0s", "MaxRetryAfter (1m0s)", "Rate limit reached (oniontest)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestRetryAfterBoundDefault: the default bound is minutes, not the
// caller's context.
func TestRetryAfterBoundDefault(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.RateLimited(time.Duration(math.MaxInt64)))
	if _, err := newAgent(t, s).Input(context.Background(), "hi"); err == nil || !strings.Contains(err.Error(), "MaxRetryAfter (5m0s)") {
		t.Fatalf("err = %v", err)
	}
}

// TestWithClientReadsRetryAfter: a client given with WithClient has its
// Retry-After honoured and bounded as the agent's own client does.
func TestWithClientReadsRetryAfter(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	s := oniontest.NewServer(t, oniontest.RateLimited(time.Second), oniontest.Text("ok"), oniontest.RateLimited(24*time.Hour))
	a, err := onion.NewAgent("c", onion.WithClient(s.Client()), onion.Logger(logger), onion.RetryBackoff(time.Millisecond, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := a.Input(context.Background(), "hi"); err != nil || out != "ok" {
		t.Fatalf("out %q, err %v", out, err)
	}
	mu.Lock()
	logged := buf.String()
	mu.Unlock()
	if !strings.Contains(logged, `"wait":1000000000`) {
		t.Errorf("the Retry-After second was not waited:\n%s", logged)
	}
	if _, err := a.Input(context.Background(), "again"); err == nil || !strings.Contains(err.Error(), "MaxRetryAfter") {
		t.Errorf("a day's Retry-After: err = %v", err)
	}
}
