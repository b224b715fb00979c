package temporal

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
)

// This file is the workflow: it drives the agent's loop, carrying out each
// effect with an activity, a timer or a wait for Approve, and feeding back
// how it went, until the loop finishes or the run continues as new.

// runInput is the workflow's input.
type runInput struct {
	Agent  string `json:"agent"`
	Prompt string `json:"prompt,omitempty"`
	// Images go with the prompt (onion.WithImages given to Start).
	Images   []loop.Image   `json:"images,omitempty"`
	History  []loop.Message `json:"history,omitempty"`
	Settings settings       `json:"settings"`
	// State is the loop's state when the run continued as new.
	State *loop.State `json:"state,omitempty"`
	// Trace is the caller's trace context, as W3C Trace Context fields.
	Trace map[string]string `json:"trace,omitempty"`
	// Answer is what the final answer is held to in a run started with
	// Answer (ask.go); nil for a plain run.
	Answer *onion.AnswerSpec `json:"answer,omitempty"`
	// Path is, for the run of an agent given as a tool, the agents whose
	// calls led to it, outermost first; empty for a run of its own.
	Path []string `json:"path,omitempty"`
}

// wrun is one run of the workflow.
type wrun struct {
	rt       *runtime
	agent    *onion.Agent
	lp       *loop.Loop
	in       runInput
	st       *loop.State
	inputs   workflow.Channel // the answers to the effects, one per effect
	inflight int              // effects handed out and not answered
	asked    int              // model requests sent in this run of the workflow
	// The calls waiting for Approve, in the order they began to wait, and
	// the answers they got.
	waiting   []loop.Call
	decisions map[string]Decision
	hooksOff  bool // a hook failed: no more hooks
	spans     spans
	// reruns counts, for each call of the current round that has them,
	// the attempts Temporal made on its own after lost workers, which
	// the loop does not know of.
	reruns map[string]int
	// local is set when model requests and reads run as local activities
	// (see LocalSteps).
	local bool
	// children are the workflow IDs of the sub-runs going on, by call ID.
	children map[string]string
	// callerHooks are, for a sub-run, its callers' hooks (see callerHooks).
	callerHooks []onion.Hooks
}

// asLocal is ctx, which has the activity options of a step, with local
// activity options to match: each attempt bounded by each, the same
// retry policy, and all attempts together by allAttempts, wait being the
// longest wait between two.
func asLocal(ctx workflow.Context, each, wait time.Duration) workflow.Context {
	policy := workflow.GetActivityOptions(ctx).RetryPolicy
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout:    each,
		ScheduleToCloseTimeout: allAttempts(each, wait, policy.MaximumAttempts),
		RetryPolicy:            policy,
	})
}

// allAttempts bounds a local activity's attempts together: a local
// activity's ScheduleToCloseTimeout is its StartToCloseTimeout unless
// set, which would leave no time for a second attempt.
func allAttempts(each, wait time.Duration, attempts int32) time.Duration {
	const years = 10 * 365 * 24 * time.Hour // no bound but each attempt's
	n := time.Duration(max(attempts, 1))
	if each >= years/n || wait >= years/n {
		return years
	}
	return n*each + (n-1)*wait
}

// execute runs the activity name with in: a local activity when local is
// set (the run's model requests and reads), else a regular one.
func execute(ctx workflow.Context, local bool, name string, in any) workflow.Future {
	if local {
		return workflow.ExecuteLocalActivity(ctx, name, in)
	}
	return workflow.ExecuteActivity(ctx, name, in)
}

func (rt *runtime) run(ctx workflow.Context, in runInput) (loop.Result, error) {
	a, err := rt.agent(in.Agent)
	if err != nil {
		return loop.Result{}, temporal.NewNonRetryableApplicationError(err.Error(), "onion.UnknownAgent", nil)
	}
	r := &wrun{rt: rt, agent: a, lp: drive.Loop(a), in: in, inputs: workflow.NewChannel(ctx), decisions: map[string]Decision{},
		spans: spans{in: rt.instrument(a, in.Path)}, reruns: map[string]int{}, children: map[string]string{}}
	r.local = in.Settings.LocalSteps
	r.callerHooks = callerHooks(rt.callers(in.Path))
	var effects []loop.Effect
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	switch {
	case in.State != nil:
		r.st = in.State
		effects = r.lp.Pending(r.st)
	default:
		if err := loop.CheckImages(in.Images); err != nil {
			// Start checks them: this input did not come through it.
			return loop.Result{}, temporal.NewNonRetryableApplicationError("the prompt's "+err.Error(), "onion.BadInput", nil)
		}
		var format *loop.Format
		if in.Answer != nil {
			format = &in.Answer.Format
		}
		r.st, effects = r.lp.StartPrompt(id, seed(id), in.History, loop.Message{Content: in.Prompt, Images: in.Images}, format)
	}
	if err := r.handle(ctx); err != nil {
		return loop.Result{}, err
	}
	stopped := false
	for {
		r.startRun(ctx)
		for _, e := range effects {
			switch e.Kind {
			case loop.Finish:
				res := r.withSubUsage(*e.Result)
				r.endHooks(ctx, res)
				r.endRun(drive.ResultOf(res), stopError(res))
				return fitResult(res), nil
			case loop.Emit:
				r.log(ctx, e)
				r.toolEvent(ctx, e)
			case loop.AskModel:
				if r.inflight == 0 && r.asked > 0 && r.historyFull(ctx) {
					r.endRun(nil, nil)
					return loop.Result{}, r.continueAsNew(ctx)
				}
				r.asked++
				iteration := r.st.Iteration
				r.carry(ctx, func(ctx workflow.Context) loop.Input { return r.askModel(ctx, e.Request, iteration) })
			case loop.RunCall:
				r.carry(ctx, func(ctx workflow.Context) loop.Input { return r.runCall(ctx, e.Call, e.Wait) })
			case loop.AskApproval:
				r.carry(ctx, func(ctx workflow.Context) loop.Input { return r.approve(ctx, e.Call) })
			case loop.CheckAnswer:
				r.carry(ctx, func(ctx workflow.Context) loop.Input { return r.checkAnswer(ctx, e.Answer) })
			}
		}
		if r.inflight == 0 {
			err := errors.New("temporal: the loop stopped without finishing")
			r.endRun(nil, err)
			return loop.Result{}, err
		}
		var in loop.Input
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(r.inputs, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, &in)
			r.inflight--
		})
		if !stopped {
			sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {
				stopped = true
				in = loop.Input{Stop: &loop.Stop{Reason: loop.StopCanceled, Error: "the workflow was canceled"}}
			})
		}
		sel.Select(ctx)
		in.Now = workflow.Now(ctx)
		effects, err = r.lp.Step(r.st, in)
		if err != nil {
			err = fmt.Errorf("temporal: the workflow broke the loop's protocol: %w", err)
			r.endRun(nil, err)
			return loop.Result{}, err
		}
		r.countReruns(effects)
	}
}

// countReruns adds to each call that has its outcome in effects the
// attempts Temporal made on its own, so that the events, the state and the
// result count every attempt the tool saw.
func (r *wrun) countReruns(effects []loop.Effect) {
	for _, e := range effects {
		n := r.reruns[e.Call.ID]
		if e.Kind != loop.Emit || e.Event != loop.EventToolFinished || n == 0 {
			continue
		}
		delete(r.reruns, e.Call.ID)
		id, round, attempts := e.Call.ID, e.Call.Iteration, e.Call.Attempts+n
		set := func(calls []loop.Call) {
			for i := range calls {
				if calls[i].ID == id && calls[i].Iteration == round && calls[i].Outcome != "" {
					calls[i].Attempts = attempts
				}
			}
		}
		set(r.st.Calls)
		set(r.st.Result.Calls)
		for i := range effects {
			switch {
			case effects[i].Kind == loop.Emit && effects[i].Event == loop.EventToolFinished && effects[i].Call.ID == id && effects[i].Call.Iteration == round:
				effects[i].Call.Attempts = attempts
			case effects[i].Kind == loop.Finish:
				set(effects[i].Result.Calls)
			}
		}
	}
}

// carry runs one effect in its own workflow goroutine, which answers on
// r.inputs.
func (r *wrun) carry(ctx workflow.Context, do func(workflow.Context) loop.Input) {
	r.inflight++
	workflow.Go(ctx, func(ctx workflow.Context) {
		in := do(ctx)
		r.inputs.Send(ctx, in)
	})
}

// seed is the run's jitter seed: drawn from the workflow ID, so that every
// replay draws the same.
func seed(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// log reports an event through the workflow's logger, which stays silent
// while the workflow replays.
func (r *wrun) log(ctx workflow.Context, e loop.Effect) {
	logger := workflow.GetLogger(ctx)
	switch e.Event {
	case loop.EventIteration:
		logger.Debug("onion: model request", "agent", r.in.Agent, "iteration", e.Iteration)
	case loop.EventToolStarted:
		logger.Debug("onion: tool call started", "agent", r.in.Agent, "tool", e.Call.Name, "call", e.Call.ID)
	case loop.EventToolFinished:
		logger.Info("onion: tool call finished", "agent", r.in.Agent, "tool", e.Call.Name, "call", e.Call.ID,
			"outcome", string(e.Call.Outcome), "error", e.Call.Error)
	}
}

// toolEvent traces a call that starts (to run, or to wait for approval)
// or has its outcome, and calls the agent's tool hooks, except while the
// workflow replays, so that each happens once.
func (r *wrun) toolEvent(ctx workflow.Context, e loop.Effect) {
	if (e.Event != loop.EventToolStarted && e.Event != loop.EventToolFinished) || workflow.IsReplaying(ctx) {
		return
	}
	var hooks []onion.Hooks
	if !r.hooksOff {
		hooks = append(drive.RunConfigOf(r.agent).Hooks, r.callerHooks...)
	}
	if r.spans.run == nil && len(hooks) == 0 {
		return
	}
	tc := drive.ResultOf(loop.Result{Calls: []loop.Call{e.Call}}).ToolCalls[0]
	if len(r.in.Path) > 0 {
		tc.Agents = r.path()
	}
	r.toolSpan(e, tc)
	r.toolHooks(ctx, e, tc, hooks)
}

// toolHooks calls the BeforeTool hooks when a call starts and the
// AfterTool hooks when it has its outcome, as Run does. They run in the
// workflow task and must return quickly. Only what the history records
// may change a run's course, so a tool hook's error is logged and the run
// goes on.
func (r *wrun) toolHooks(ctx workflow.Context, e loop.Effect, tc onion.ToolCall, hooks []onion.Hooks) {
	te := onion.ToolEvent{RunID: r.st.RunID, Call: tc}
	for _, h := range hooks {
		name, hook := "BeforeTool", h.BeforeTool
		if e.Event == loop.EventToolFinished {
			name, hook = "AfterTool", h.AfterTool
		}
		if hook == nil {
			continue
		}
		if err := hook(context.Background(), te); err != nil {
			workflow.GetLogger(ctx).Error("onion: "+name+" hook failed; a durable run goes on", "agent", r.in.Agent,
				"tool", e.Call.Name, "call", e.Call.ID, "error", err.Error())
		}
	}
}

// endHooks calls the agent's OnError hooks when the run stopped early, or
// its OnComplete hooks when it ended with an answer, except while the
// workflow replays.
func (r *wrun) endHooks(ctx workflow.Context, res loop.Result) {
	if workflow.IsReplaying(ctx) {
		return
	}
	err := stopError(res)
	for _, h := range drive.RunConfigOf(r.agent).Hooks {
		if err != nil && h.OnError != nil {
			h.OnError(context.Background(), err)
		}
		if err == nil && h.OnComplete != nil {
			h.OnComplete(context.Background(), drive.ResultOf(res))
		}
	}
}

// stopError is the error of a run that stopped early, nil for one that
// ended with an answer.
func stopError(res loop.Result) error {
	if res.StopReason == loop.StopFailed || res.StopReason == loop.StopCanceled {
		return fmt.Errorf("temporal: run %s stopped (%s): %s", res.RunID, res.StopReason, res.Error)
	}
	return nil
}

// historyFull reports whether the run should continue as new before its
// next model request.
func (r *wrun) historyFull(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	s := r.in.Settings
	return info.GetContinueAsNewSuggested() ||
		info.GetCurrentHistoryLength() >= s.HistoryEvents || info.GetCurrentHistorySize() >= s.HistoryBytes
}

func (r *wrun) continueAsNew(ctx workflow.Context) error {
	// Wait for an Update handler still going (an Approve arriving late).
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	st := *r.st
	st.Result = fitResult(st.Result)
	next := runInput{Agent: r.in.Agent, Settings: r.in.Settings, State: &st, Trace: r.in.Trace, Answer: r.in.Answer}
	workflow.GetLogger(ctx).Info("onion: continuing as new", "agent", r.in.Agent, "iteration", st.Iteration,
		"events", workflow.GetInfo(ctx).GetCurrentHistoryLength())
	return workflow.NewContinueAsNewError(ctx, WorkflowName, next)
}

// askModel sends one model request, with the retries of its activity:
// the agent's Retries (unless ModelRetries says otherwise) and backoff for
// the errors the model's server returns, and apart from them up to
// LostWorkerRetries more activities when a worker is lost mid-request.
func (r *wrun) askModel(ctx workflow.Context, req *loop.Request, iteration int) loop.Input {
	s := r.in.Settings
	in := modelInput{Agent: r.in.Agent, Request: req, RunID: r.st.RunID, Iteration: iteration, Path: r.in.Path}
	if n := payloadSize(in); n > maxPayload || n < 0 {
		return stopFailed(tooLarge("the conversation sent to the model", n) + ": start a new run with a shorter history")
	}
	rc := drive.RunConfigOf(r.agent)
	retries := rc.Retries
	if s.ModelRetries != nil {
		retries = *s.ModelRetries
	}
	for {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: s.ModelTimeout,
			HeartbeatTimeout:    s.HeartbeatTimeout,
			RetryPolicy: &temporal.RetryPolicy{
				InitialInterval:    max(rc.BackoffMin, time.Millisecond),
				BackoffCoefficient: 2,
				MaximumInterval:    max(rc.BackoffMax, time.Millisecond),
				MaximumAttempts:    int32(min(max(retries-in.Failed, 0), math.MaxInt32-1) + 1),
				// A lost worker ends the activity: the workflow counts it
				// apart from the failed requests.
				NonRetryableErrorTypes: lostWorkerTypes,
			},
		})
		if r.local {
			actx = asLocal(actx, s.ModelTimeout, max(rc.BackoffMax, rc.MaxRetryAfter))
		}
		var resp loop.Response
		err := execute(r.traced(actx, ""), r.local, modelActivity, in).Get(ctx, &resp)
		if err == nil {
			return loop.Input{Reply: &resp}
		}
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == hookErrorType {
			r.hooksOff = true
			return stopFailed(app.Message())
		}
		attempts, lost := workerLost(err)
		if !lost || in.Lost >= s.LostWorker || workflow.GetVersion(ctx, lostModelChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			return stopFailed("model request failed: " + cause(err))
		}
		in.Failed = min(in.Failed+attempts-1, retries)
		in.Lost++
		workflow.GetLogger(ctx).Warn("onion: the worker of a model request was lost; sending it again", "agent", r.in.Agent,
			"iteration", iteration, "lost", in.Lost, "error", cause(err))
	}
}

// lostModelChange marks the workflows that send a model request again in
// a new activity when its worker was lost (workflow.GetVersion): a
// history recorded before ends the run there, as it did.
const lostModelChange = "onion.model-lost-worker"

// lostWorkerTypes are the failures of a lost worker, as a retry policy
// names them: no heartbeat in time, no result in time, a worker that
// stopped before the activity ended.
var lostWorkerTypes = []string{
	"TemporalTimeout:" + enumspb.TIMEOUT_TYPE_HEARTBEAT.String(),
	"TemporalTimeout:" + enumspb.TIMEOUT_TYPE_START_TO_CLOSE.String(),
	workerStopped,
}

// workerLost reports whether err, the failure of an activity, is that of
// a lost worker, and at which of the activity's attempts, as its last
// heartbeat or the stop's error says (1 when neither does).
func workerLost(err error) (attempt int, lost bool) {
	var n int32
	var te *temporal.TimeoutError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &te):
		if t := te.TimeoutType(); t != enumspb.TIMEOUT_TYPE_HEARTBEAT && t != enumspb.TIMEOUT_TYPE_START_TO_CLOSE {
			return 0, false
		}
		if te.HasLastHeartbeatDetails() {
			_ = te.LastHeartbeatDetails(&n)
		}
	case errors.As(err, &app) && app.Type() == workerStopped:
		if app.HasDetails() {
			_ = app.Details(&n)
		}
	default:
		return 0, false
	}
	return int(max(n, 1)), true
}

func stopFailed(why string) loop.Input {
	return loop.Input{Stop: &loop.Stop{Reason: loop.StopFailed, Error: why}}
}

// cause is the words of the failure at the bottom of an activity's error.
func cause(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return "timed out (" + timeoutName(te.TimeoutType()) + ")"
	}
	return err.Error()
}

func timeoutName(t enumspb.TimeoutType) string {
	switch t {
	case enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return "no heartbeat within the heartbeat timeout"
	case enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		return "start-to-close timeout"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return "schedule-to-start timeout"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE:
		return "schedule-to-close timeout"
	}
	return t.String()
}

// activityID names the activity of a call: the same on each of its
// attempts, so that the idempotency key is too.
func activityID(c loop.Call) string {
	return fmt.Sprintf("tool/%d/%s", c.Iteration, c.ID)
}

// runCall makes one attempt of a call as an activity. Reads, and
// idempotent writes, are run again when their worker is lost; any other
// write is sent once, and an activity error then means nobody knows
// whether it took effect.
func (r *wrun) runCall(ctx workflow.Context, c loop.Call, wait time.Duration) loop.Input {
	if c.Attempts > 1 {
		// A retry reuses the activity's ID: a timer, even a short one, lets
		// the workflow forget the last attempt's command first.
		wait = max(wait, time.Millisecond)
	}
	if wait > 0 {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return loop.Input{Done: &loop.Done{CallID: c.ID, Failure: loop.NotRun}}
		}
	}
	if t, sub := r.subAgent(c); sub != nil {
		return r.runSubAgent(ctx, c, t, sub)
	}
	in := toolInput{Agent: r.in.Agent, RunID: r.st.RunID, Call: c, Chain: workflow.GetInfo(ctx).FirstRunID}
	in.Call.Attempts = max(c.Attempts, 1) + r.reruns[c.ID] // the attempt the tool sees
	if n := payloadSize(in); n > maxPayload || n < 0 {
		return loop.Input{Done: &loop.Done{CallID: c.ID, Failure: loop.BadArguments,
			Error: tooLarge("the call with its arguments", n) + "; the tool did not run"}}
	}
	s := r.in.Settings
	attempts := int32(1)
	if t, ok := r.agent.Tools().Get(c.Name); ok && (c.Intent == loop.Read || t.Idempotent()) {
		attempts = int32(s.LostWorker + 1)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:             activityID(c),
		ScheduleToStartTimeout: s.QueueTimeout,
		StartToCloseTimeout:    r.toolTimeout(),
		HeartbeatTimeout:       s.HeartbeatTimeout,
		WaitForCancellation:    true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    attempts,
		},
	})
	local := r.local && c.Intent == loop.Read
	if local {
		// A read runs again when its worker is lost: the workflow task's
		// next worker runs it, with no trip through the server first.
		ctx = asLocal(ctx, r.toolTimeout(), workflow.GetActivityOptions(ctx).RetryPolicy.MaximumInterval)
	}
	var out toolOutput
	err := execute(r.traced(ctx, c.ID), local, toolActivity, in).Get(ctx, &out)
	if err != nil {
		out = toolOutput{Done: lost(c, err), Attempt: 1}
		var ae *temporal.ActivityError
		if errors.As(err, &ae) && ae.RetryState() == enumspb.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED {
			out.Attempt = attempts
		}
	}
	if out.Attempt > 1 {
		r.reruns[c.ID] += int(out.Attempt) - 1
	}
	d := out.Done
	d.CallID = c.ID
	return loop.Input{Done: &d}
}

// toolTimeout is the start-to-close timeout of a tool call's activity: the
// one the run was started with, else the agent's own bound on a call
// (onion.DefaultToolTimeout unless it sets another) with a heartbeat's
// margin, so that the worker cuts the call off and reports it first; 1 h
// for an agent whose calls have no bound.
func (r *wrun) toolTimeout() time.Duration {
	s := r.in.Settings
	switch {
	case s.ToolTimeout > 0:
		return s.ToolTimeout
	case drive.CallConfigOf(r.agent).Timeout > 0:
		return drive.CallConfigOf(r.agent).Timeout + s.HeartbeatTimeout
	}
	return time.Hour
}

// lost is how a call ended whose activity failed: the tool activity
// reports the tool's own failures as results, so the worker never
// reported back. A call no worker started did not run; any other was cut,
// which makes a write's outcome unknown.
func lost(c loop.Call, err error) loop.Done {
	var te *temporal.TimeoutError
	if errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START {
		return loop.Done{CallID: c.ID, Failure: loop.ToolFailed,
			Error: "no worker started the call in time (schedule-to-start timeout), so the tool did not run and it is safe to call again"}
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return loop.Done{CallID: c.ID, Failure: loop.Cut, Error: "the run was canceled"}
	}
	return loop.Done{CallID: c.ID, Failure: loop.Cut, Error: "its worker did not report back: " + cause(err)}
}

// fitResult is res small enough for one payload: when it is not, the
// calls' outputs (which the conversation holds anyway) are cut short.
func fitResult(res loop.Result) loop.Result {
	if payloadSize(res) <= maxPayload {
		return res
	}
	res.Calls = append([]loop.Call(nil), res.Calls...)
	for i := range res.Calls {
		res.Calls[i].Output = loop.Cap(res.Calls[i].Output, 1<<10)
	}
	return res
}
