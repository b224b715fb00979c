package temporal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// This file holds the activities: one model request, one attempt of one
// tool call, and the check whether a call needs approval. They run on a
// worker, with the worker's agents.

// modelInput is the input of the model activity.
type modelInput struct {
	Agent   string        `json:"agent"`
	Request *loop.Request `json:"request"`
	// MaxRetryAfter bounds the server's Retry-After: past it the request
	// fails with the server's words.
	MaxRetryAfter time.Duration `json:"max_retry_after"`
}

// modelErrorType is the ApplicationError type of a failed model request.
const modelErrorType = "onion.ModelError"

// model sends one request to the agent's model. A failure that may pass
// when sent again is a retryable error, with the server's Retry-After as
// the next retry's delay; any other is not retryable.
func (rt *runtime) model(ctx context.Context, in modelInput) (*loop.Response, error) {
	a, err := rt.agent(in.Agent)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), modelErrorType, nil)
	}
	defer heartbeat(ctx)()
	resp, err := a.LanguageModel().Generate(ctx, in.Request, nil)
	if err != nil {
		return nil, modelFailure(err, in.MaxRetryAfter)
	}
	if resp == nil {
		return nil, temporal.NewNonRetryableApplicationError("the model returned no response and no error", modelErrorType, nil)
	}
	if n := payloadSize(resp); n > maxPayload {
		return nil, temporal.NewNonRetryableApplicationError(tooLarge("the model's reply", n), modelErrorType, nil)
	}
	return resp, nil
}

// modelFailure is err as the activity reports it, so that Temporal retries
// exactly what the live agent would.
func modelFailure(err error, maxRetryAfter time.Duration) error {
	msg := err.Error()
	var me *onion.ModelError
	if !errors.As(err, &me) {
		// Not described by the wire: only a network error may pass later.
		var ne net.Error
		if errors.As(err, &ne) {
			return temporal.NewApplicationError(msg, modelErrorType)
		}
		return temporal.NewNonRetryableApplicationError(msg, modelErrorType, nil)
	}
	switch {
	case !me.Retryable:
		return temporal.NewNonRetryableApplicationError(msg, modelErrorType, nil)
	case me.RetryAfter > maxRetryAfter:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the server asked to wait %v before sending the request again, longer than %v: %s", me.RetryAfter, maxRetryAfter, msg),
			modelErrorType, nil)
	}
	return temporal.NewApplicationErrorWithOptions(msg, modelErrorType, temporal.ApplicationErrorOptions{NextRetryDelay: me.RetryAfter})
}

// toolInput is the input of the tool activity: one attempt of one call.
type toolInput struct {
	Agent string    `json:"agent"`
	RunID string    `json:"run_id"`
	Call  loop.Call `json:"call"`
}

// tool makes one attempt of a call with the agent's tool, through the
// agent's own single-call path (timeout, panics, the cut), heartbeating
// while it runs. The tool's failure is the result, never the activity's
// error: an activity error always means the worker did not report back.
func (rt *runtime) tool(ctx context.Context, in toolInput) (loop.Done, error) {
	failed := func(err string) (loop.Done, error) {
		return loop.Done{CallID: in.Call.ID, Failure: loop.ToolFailed, Error: err}, nil
	}
	a, err := rt.agent(in.Agent)
	if err != nil {
		return failed(err.Error())
	}
	t, ok := a.Tools().Get(in.Call.Name)
	if !ok {
		return failed(fmt.Sprintf("this worker's agent %q has no tool %q: give every worker the same agents", in.Agent, in.Call.Name))
	}
	info := activity.GetInfo(ctx)
	c := onion.CallOf(in.RunID, in.Call)
	// Temporal's attempts of one activity are attempts too: a read run
	// again after a lost worker.
	c.Attempt = max(in.Call.Attempts, 1) + int(info.Attempt) - 1
	c.IdempotencyKey = IdempotencyKey(info.WorkflowExecution.ID, info.ActivityID)
	cfg := a.CallConfig()
	limit := cfg.MaxOutput
	if limit <= 0 {
		limit = a.Loop().Config().MaxOutput
	}
	stop := heartbeat(ctx)
	d := cfg.Attempt(ctx, t, c, in.Call.Arguments)
	stop()
	d.CallID = in.Call.ID
	d.Output, d.Error = loop.Cap(d.Output, limit), loop.Cap(d.Error, limit)
	if n := payloadSize(d); n > maxPayload {
		// Only a MaxToolOutput above the payload limit gets here.
		d = loop.Done{CallID: in.Call.ID, Failure: loop.ToolFailed,
			Error: tooLarge("the tool's result", n) + "; the tool ran, but its result cannot be kept: lower MaxToolOutput"}
	}
	return d, nil
}

// IdempotencyKey is the key a tool reads in onion.CallInfo(ctx) during a
// durable run: the workflow ID and the activity's ID, the same on every
// attempt of the call and after any crash.
func IdempotencyKey(workflowID, activityID string) string {
	return workflowID + "/" + activityID
}

// approvalInput is the input of the approval check.
type approvalInput struct {
	Agent string    `json:"agent"`
	RunID string    `json:"run_id"`
	Call  loop.Call `json:"call"`
}

// needsApproval reports whether a call must wait for Approve: always for
// RequireApproval, else what the tool's ApproveIf predicate says (a
// failing predicate means it must).
func (rt *runtime) needsApproval(ctx context.Context, in approvalInput) (bool, error) {
	a, err := rt.agent(in.Agent)
	if err != nil {
		return true, nil
	}
	t, ok := a.Tools().Get(in.Call.Name)
	if !ok {
		return true, nil
	}
	return t.NeedsApproval(ctx, onion.CallOf(in.RunID, in.Call)), nil
}

// heartbeat records a heartbeat on a timer until the returned func is
// called, so that a lost worker is noticed within the heartbeat timeout
// while the tool itself knows nothing of Temporal.
func heartbeat(ctx context.Context) (stop func()) {
	timeout := activity.GetInfo(ctx).HeartbeatTimeout
	if timeout <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(timeout/4, 10*time.Millisecond))
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-t.C:
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
