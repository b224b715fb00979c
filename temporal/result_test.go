package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/onionkit/onion/loop"
)

// missedRun is a run whose first misses polls miss its close: each waits
// until its context ends, as a long poll that missed the notice does.
type missedRun struct {
	misses, polls int
}

func (r *missedRun) GetID() string                  { return "wf-1" }
func (r *missedRun) GetRunID() string               { return "run-1" }
func (r *missedRun) GetFirstExecutionRunID() string { return "run-1" }
func (r *missedRun) Get(ctx context.Context, v any) error {
	r.polls++
	if r.polls <= r.misses {
		<-ctx.Done()
		return ctx.Err()
	}
	b, _ := json.Marshal(loop.Result{Output: "done", StopReason: loop.StopNatural})
	return json.Unmarshal(b, v)
}
func (r *missedRun) GetWithOptions(ctx context.Context, v any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, v)
}

func TestResultPollsAgainAfterAMissedClose(t *testing.T) {
	defer func(d time.Duration) { resultPoll = d }(resultPoll)
	resultPoll = 10 * time.Millisecond
	// A poll that missed the close waits until the caller gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	run := &missedRun{misses: 2}
	res, err := Result(ctx, run)
	if err != nil || res.Output != "done" {
		t.Fatalf("Result = %+v, %v; want the run's output", res, err)
	}
	if run.polls != 3 {
		t.Errorf("polls = %d, want 3", run.polls)
	}
}

func TestResultEndsWithItsContext(t *testing.T) {
	defer func(d time.Duration) { resultPoll = d }(resultPoll)
	resultPoll = 10 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Millisecond)
	defer cancel()
	_, err := Result(ctx, &missedRun{misses: 1 << 30})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Result = %v, want the caller's deadline", err)
	}
}
