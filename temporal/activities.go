package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
)

// This file holds the activities: one model request, one attempt of one
// tool call, and the check whether a call needs approval. They run on a
// worker, with the worker's agents.

// modelInput is the input of the model activity.
type modelInput struct {
	Agent   string        `json:"agent"`
	Request *loop.Request `json:"request"`
	// The run and the round of the request, for the hooks and the log.
	RunID     string `json:"run_id,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	// Failed and Lost count the attempts of this request that earlier
	// activities made: those that failed with an error the model's
	// server returned, and those whose worker was lost.
	Failed int `json:"failed,omitempty"`
	Lost   int `json:"lost,omitempty"`
	// Path is the run's (runInput.Path), whose agents' instruments trace
	// a sub-run whose agent has none.
	Path []string `json:"path,omitempty"`
}

// The ApplicationError types of a failed model request, of a hook's error,
// which stops the run, and of an activity cut by its worker's stop.
const (
	modelErrorType   = "onion.ModelError"
	hookErrorType    = "onion.HookError"
	workerStopped    = "onion.WorkerStopped"
	workerStoppedMsg = "the worker stopped before it ended (its stop timeout passed)"
)

// stopping reports whether the activity's context ended because its
// worker is stopping and its stop timeout passed.
func stopping(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	if errors.Is(context.Cause(ctx), worker.ErrWorkerShutdown) {
		return true
	}
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return true
	default:
		return false
	}
}

// stopped is the error of an activity cut by its worker's stop at
// attempt, which its details carry: the workflow counts it as a lost
// worker.
func stopped(attempt int32) error {
	return temporal.NewApplicationErrorWithOptions(workerStoppedMsg, workerStopped,
		temporal.ApplicationErrorOptions{Details: []any{attempt}})
}

// model sends one request to the agent's model, calling the agent's
// BeforeModel hooks before its first attempt and its AfterModel hooks
// after the reply, logging it with the agent's logger and tracing it with
// the agent's instruments. A failure that may pass when sent again
// (onion.Retryable) is a retryable error, with the server's Retry-After
// as the next retry's delay; any other is not retryable. A hook's error
// is not retryable either, and stops the run. A request cut by the
// worker's stop is a workerStopped error, which the workflow counts as a
// lost worker. Its heartbeats carry the activity's attempt, so that the
// workflow knows how many attempts failed before a lost worker.
func (rt *runtime) model(ctx context.Context, in modelInput) (*loop.Response, error) {
	a, err := rt.agent(in.Agent)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), modelErrorType, nil)
	}
	info := activity.GetInfo(ctx)
	// Without a heartbeat, the workflow counts a lost worker's attempt
	// as the first.
	defer heartbeat(ctx, info.Attempt > 1, info.Attempt)()
	rc := drive.RunConfigOf(a)
	// The attempt of the request, counting those of earlier activities.
	attempt := int(info.Attempt) + in.Failed + in.Lost
	me := onion.ModelEvent{RunID: in.RunID, Iteration: in.Iteration, WithTools: len(in.Request.Tools) > 0}
	if attempt == 1 {
		// Once per request, as Run calls them: a retry is the same request.
		for _, h := range rc.Hooks {
			if h.BeforeModel != nil {
				if err := h.BeforeModel(ctx, me); err != nil {
					return nil, hookFailure("BeforeModel", err)
				}
			}
		}
	}
	start := time.Now()
	mctx, end := traceModel(ctx, rt.instrument(a, in.Path), a, in.RunID, in.Request)
	resp, err := a.LanguageModel().Generate(mctx, in.Request, nil)
	end(resp, err)
	if err != nil {
		if stopping(ctx) {
			return nil, stopped(info.Attempt)
		}
		f := modelFailure(err, rc.MaxRetryAfter)
		var app *temporal.ApplicationError
		if errors.As(f, &app) && !app.NonRetryable() && (info.RetryPolicy == nil || info.Attempt < info.RetryPolicy.MaximumAttempts) {
			rc.Logger.LogAttrs(ctx, slog.LevelWarn, "model request failed, retrying", slog.String("agent", in.Agent),
				slog.String("run", in.RunID), slog.Int("attempt", attempt), slog.String("error", err.Error()))
		}
		return nil, f
	}
	if resp == nil {
		return nil, temporal.NewNonRetryableApplicationError("the model returned no response and no error", modelErrorType, nil)
	}
	if n := payloadSize(resp); n > maxPayload {
		return nil, temporal.NewNonRetryableApplicationError(tooLarge("the model's reply", n), modelErrorType, nil)
	}
	u := resp.Usage
	u.Requests = 1
	me.Text, me.ToolCalls, me.Duration, me.Usage = resp.Message.Content, len(resp.Message.ToolCalls), time.Since(start), u
	rc.Logger.LogAttrs(ctx, slog.LevelInfo, "model request",
		slog.String("agent", in.Agent), slog.String("run", in.RunID), slog.Int("iteration", me.Iteration),
		slog.Int("attempt", attempt), slog.Duration("duration", me.Duration), slog.Int("tool_calls", me.ToolCalls),
		slog.Int("prompt_tokens", u.PromptTokens), slog.Int("completion_tokens", u.CompletionTokens))
	for _, h := range rc.Hooks {
		if h.AfterModel != nil {
			if err := h.AfterModel(ctx, me); err != nil {
				return nil, hookFailure("AfterModel", err)
			}
		}
	}
	return resp, nil
}

// hookFailure is a hook's error as an activity reports it: not retried,
// and the end of the run.
func hookFailure(hook string, err error) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("onion: %s hook: %v", hook, err), hookErrorType, nil)
}

// modelFailure is err as the activity reports it, so that Temporal retries
// exactly what the live agent would: what onion.Retryable says, waiting
// the server's Retry-After up to maxRetryAfter.
func modelFailure(err error, maxRetryAfter time.Duration) error {
	msg := err.Error()
	retry, after := onion.Retryable(err)
	switch {
	case !retry:
		return temporal.NewNonRetryableApplicationError(msg, modelErrorType, nil)
	case after > maxRetryAfter:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the server asked to wait %v before sending the request again, longer than %v: %s", after, maxRetryAfter, msg),
			modelErrorType, nil)
	}
	return temporal.NewApplicationErrorWithOptions(msg, modelErrorType, temporal.ApplicationErrorOptions{NextRetryDelay: after})
}

// toolInput is the input of the tool activity: one attempt of one call.
type toolInput struct {
	Agent string    `json:"agent"`
	RunID string    `json:"run_id"`
	Call  loop.Call `json:"call"`
	// Chain is the first run ID of the workflow's chain of runs (kept
	// across continue-as-new), which tells apart two executions that
	// reused one workflow ID; empty in the inputs of older workflows.
	Chain string `json:"chain,omitempty"`
}

// toolOutput is the result of the tool activity: how the attempt went,
// and which of Temporal's attempts of the activity made it (more than 1
// when Temporal ran it again after a lost worker; 0 from older workers).
type toolOutput struct {
	loop.Done
	Attempt int32 `json:"temporal_attempt,omitempty"`
}

// tool makes one attempt of a call with the agent's tool, through the
// agent's own single-call path (timeout, panics, the cut), heartbeating
// while it runs. The tool's failure is the result, never the activity's
// error: an activity error always means the worker did not report back,
// or, for a call cut by the worker's stop, could not let it finish.
func (rt *runtime) tool(ctx context.Context, in toolInput) (toolOutput, error) {
	info := activity.GetInfo(ctx)
	failed := func(err string) (toolOutput, error) {
		return toolOutput{Done: loop.Done{CallID: in.Call.ID, Failure: loop.ToolFailed, Error: err}, Attempt: info.Attempt}, nil
	}
	a, err := rt.agent(in.Agent)
	if err != nil {
		return failed(err.Error())
	}
	t, ok := a.Tools().Get(in.Call.Name)
	if !ok {
		return failed(fmt.Sprintf("this worker's agent %q has no tool %q: give every worker the same agents", in.Agent, in.Call.Name))
	}
	c := drive.CallOf(in.RunID, in.Call)
	// Temporal's attempts of one activity are attempts too: a read run
	// again after a lost worker.
	c.Attempt = max(in.Call.Attempts, 1) + int(info.Attempt) - 1
	c.IdempotencyKey = callKey(info.WorkflowExecution.ID, in.Chain, in.Call)
	cfg := drive.CallConfigOf(a)
	limit := cfg.MaxOutput
	if limit <= 0 {
		limit = drive.Loop(a).Config().MaxOutput
	}
	start := time.Now()
	stop := heartbeat(ctx, false)
	d := cfg.Attempt(ctx, t, c, in.Call.Arguments)
	stop()
	if d.Failure == loop.Cut && stopping(ctx) {
		d.Error = workerStoppedMsg
		logAttempt(ctx, drive.RunConfigOf(a).Logger, in, c.Attempt, d, time.Since(start))
		return toolOutput{}, stopped(info.Attempt)
	}
	logAttempt(ctx, drive.RunConfigOf(a).Logger, in, c.Attempt, d, time.Since(start))
	d.CallID = in.Call.ID
	d.Output, d.Error = loop.Cap(d.Output, limit), loop.Cap(d.Error, limit)
	if n := payloadSize(d); n > maxPayload {
		// Only a MaxToolOutput above the payload limit gets here.
		d = loop.Done{CallID: in.Call.ID, Failure: loop.ToolFailed,
			Error: tooLarge("the tool's result", n) + "; the tool ran, but its result cannot be kept: lower MaxToolOutput"}
	}
	return toolOutput{Done: d, Attempt: info.Attempt}, nil
}

// logAttempt logs one attempt of a call with the agent's logger. The
// call's outcome, once its last attempt is known, the workflow logs.
func logAttempt(ctx context.Context, l *slog.Logger, in toolInput, attempt int, d loop.Done, took time.Duration) {
	if !l.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{slog.String("agent", in.Agent), slog.String("run", in.RunID), slog.String("tool", in.Call.Name),
		slog.String("call_id", in.Call.ID), slog.Int("attempt", attempt), slog.Duration("duration", took)}
	if d.Failure != "" {
		attrs = append(attrs, slog.String("failure", string(d.Failure)), slog.String("error", d.Error))
	}
	l.LogAttrs(ctx, slog.LevelInfo, "tool call attempt", attrs...)
}

// IdempotencyKey is the key of a call of the activity activityID in the
// workflow workflowID, for workflows started before keys told runs apart
// (see callKey, which a tool reads in onion.CallInfo(ctx) now).
func IdempotencyKey(workflowID, activityID string) string {
	return workflowID + "/" + activityID
}

// callKey is the idempotency key of call c in the workflow workflowID
// whose chain of runs began with the run chain: the same on every attempt
// of the call, after any crash and across continue-as-new, and different
// for every other call of any run, including a later execution that
// reuses the workflow ID and a model that repeats its call IDs or sends
// none (the loop's own IDs repeat from run to run). No text of the
// model's is in it: its call ID, whatever it is, is hashed.
func callKey(workflowID, chain string, c loop.Call) string {
	if chain == "" {
		return IdempotencyKey(workflowID, activityID(c)) // a workflow started by an older worker
	}
	sum := sha256.Sum256([]byte(c.ID))
	return workflowID + "/" + chain + "/tool/" + strconv.Itoa(c.Iteration) + "/" + hex.EncodeToString(sum[:8])
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
	return t.NeedsApproval(ctx, drive.CallOf(in.RunID, in.Call)), nil
}

// heartbeat records a heartbeat with details on a timer until the
// returned func is called, so that a lost worker is noticed within the
// heartbeat timeout while the tool itself knows nothing of Temporal.
//
// The first heartbeat goes out a quarter of the timeout in, not at the
// start: the server counts the timeout from the activity's start, so a
// worker lost before it is noticed as soon, and a short activity (most of
// them) costs the server no heartbeat to record. With now set, as when
// details differ from what the workflow assumes without a heartbeat, the
// first goes out at once.
func heartbeat(ctx context.Context, now bool, details ...any) (stop func()) {
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
			if now {
				activity.RecordHeartbeat(ctx, details...)
			}
			now = true
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
