package onion_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
)

// TestRunConfigIsTheAgentsSettings: another runtime reads the retries,
// backoff, Retry-After bound, hooks and logger the agent was given.
func TestRunConfigIsTheAgentsSettings(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	called := ""
	a, err := onion.NewAgent("a", onion.Retries(7), onion.RetryBackoff(time.Second, time.Minute), onion.MaxRetryAfter(time.Hour),
		onion.Logger(logger), onion.Hooks{BeforeModel: func(context.Context, onion.ModelEvent) error { called = "before"; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	rc := drive.RunConfigOf(a)
	if rc.Retries != 7 || rc.BackoffMin != time.Second || rc.BackoffMax != time.Minute || rc.MaxRetryAfter != time.Hour || rc.Logger != logger {
		t.Errorf("RunConfig is %+v", rc)
	}
	if len(rc.Hooks) != 1 || rc.Hooks[0].BeforeModel == nil {
		t.Fatalf("RunConfig has hooks %+v", rc.Hooks)
	}
	rc.Hooks[0].BeforeModel(context.Background(), onion.ModelEvent{})
	if called != "before" {
		t.Error("the hook in RunConfig is not the agent's")
	}
	d, err := onion.NewAgent("d")
	if err != nil {
		t.Fatal(err)
	}
	if rc := drive.RunConfigOf(d); rc.Retries != 3 || rc.MaxRetryAfter != 5*time.Minute || rc.Logger == nil || rc.Hooks != nil {
		t.Errorf("default RunConfig is %+v", rc)
	}
}

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err   error
		retry bool
		after time.Duration
	}{
		{&onion.ModelError{StatusCode: 429, Retryable: true, RetryAfter: 7 * time.Second}, true, 7 * time.Second},
		{fmt.Errorf("wrapped: %w", &onion.ModelError{StatusCode: 503, Retryable: true}), true, 0},
		{&onion.ModelError{StatusCode: 400}, false, 0},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true, 0},
		{io.ErrUnexpectedEOF, true, 0},
		{context.DeadlineExceeded, false, 0},
		{errors.New("something odd"), false, 0},
	} {
		retry, after := onion.Retryable(c.err)
		if retry != c.retry || after != c.after {
			t.Errorf("Retryable(%v) = %v, %v; want %v, %v", c.err, retry, after, c.retry, c.after)
		}
	}
}
