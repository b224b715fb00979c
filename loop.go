package onion

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/onionkit/onion/loop"
)

// This file is the live runtime: it drives the agent's loop.Loop with
// goroutines, the clock, hooks, the logger and the approver, all of which
// the loop itself never touches. It carries out each effect the loop asks
// for and feeds back how it went, until the loop finishes.

// run runs prompt after history and returns the result and what a
// Conversation keeps of it (runTurn). When prev is not nil, history is
// prev.Messages, and the run builds in prev's arrays (see
// Conversation.lease).
func (a *Agent) run(ctx context.Context, history []Message, prev *loop.State, prompt string, events chan<- Event) (*Result, runTurn, error) {
	return a.runWith(ctx, history, prev, prompt, events, nil)
}

// runWith is run, with the final answer held to ans's type when ans is
// not nil (see Ask).
func (a *Agent) runWith(ctx context.Context, history []Message, prev *loop.State, prompt string, events chan<- Event, ans *answerRun) (*Result, runTurn, error) {
	return a.runIn(ctx, history, prev, prompt, events, ans, nil)
}

// runIn is runWith, as a sub-run of the run parent names when parent is
// not nil (see agentTool).
func (a *Agent) runIn(ctx context.Context, history []Message, prev *loop.State, prompt string, events chan<- Event, ans *answerRun, parent *parentRun) (*Result, runTurn, error) {
	ctx, images := promptImages(ctx)
	if err := loop.CheckImages(images); err != nil {
		return nil, runTurn{}, fmt.Errorf("onion: agent %q: the prompt's %w", a.name, err)
	}
	var random [16]byte // the run's ID, then the seed of its jitter
	_, _ = rand.Read(random[:])
	runID, seed := hex.EncodeToString(random[:8]), binary.LittleEndian.Uint64(random[8:])
	var format *loop.Format
	if ans != nil {
		format = &ans.typ.format
	}
	var st *loop.State
	var effects []loop.Effect
	if prev != nil {
		st, effects = a.core.StartAfter(prev, runID, seed, Message{Content: prompt, Images: images}, format)
	} else {
		st, effects = a.core.StartPrompt(runID, seed, history, Message{Content: prompt, Images: images}, format)
	}
	r := &liveRun{a: a, st: st, events: events, inputs: make(chan loop.Input), halt: make(chan struct{}), answer: ans}
	r.inherit(parent)
	r.ctx = context.WithValue(ctx, runKey{}, r)
	r.g.SetLimit(a.cfg.maxParallel)
	r.startRun(prompt)
	res, err := r.drive(effects)
	if by := r.subs.sum(); by != nil && res != nil {
		// The sub-runs' requests count in this run's usage; each agent's
		// own are in the breakdown.
		res.Usage, res.ByAgent = loop.WithSubRuns(res.Usage, by, strings.Join(r.path(), "/"))
	}
	if err == nil && res.StopReason == StopRefused {
		err = fmt.Errorf("onion: agent %q: %w: %s", a.name, ErrRefused, st.Result.Error)
	}
	r.endRun(res, err)
	turn := runTurn{st: st, from: history}
	if err == nil {
		turn.msgs = a.turn(st.Messages[st.Start:], prompt, res.Output)
	}
	for _, h := range a.cfg.hooks {
		if err != nil && h.OnError != nil {
			h.OnError(ctx, err)
		}
		if err == nil && h.OnComplete != nil {
			h.OnComplete(ctx, res)
		}
	}
	return res, turn, err
}

// turn is what a run adds to its conversation: the prompt (with the
// images of msgs[0], the prompt's message) and the answer, or every
// message of the run with KeepToolHistory.
func (a *Agent) turn(msgs []Message, prompt, answer string) []Message {
	if a.cfg.keepTools {
		return slices.Clone(msgs)
	}
	p := Message{Role: RoleUser, Content: prompt}
	if len(msgs) > 0 && msgs[0].Role == RoleUser {
		p.Images = msgs[0].Images
	}
	return []Message{p, {Role: RoleAssistant, Content: answer}}
}

// liveRun is one Run or Stream: the loop's State and what carries out its
// effects. Only the goroutine in drive touches it; call goroutines report
// through inputs.
type liveRun struct {
	a      *Agent
	ctx    context.Context
	st     *loop.State
	events chan<- Event // nil for Run
	inputs chan loop.Input
	halt   chan struct{}  // closed when the run stops: retries waiting their backoff give up
	g      errgroup.Group // the approvals and calls in flight

	queue    []loop.Effect // effects to carry out, from next on
	next     int
	inflight int   // effects handed to goroutines, not yet answered
	stopping bool  // a Stop went in: nothing more starts
	err      error // the error the run ends with
	hooksOff bool  // a hook failed: no more hooks
	result   *loop.Result
	tools    map[string]context.Context // the contexts of the calls started, by ID, with instruments
	answer   *answerRun                 // the typed answer of Ask, nil for Run and Stream
	parent   *parentRun                 // the run this one is a task of, nil for a run of its own
	subs     subUsage                   // the usage of the runs this one handed tasks to
	// For a sub-run, made once when it starts (see inherit): the path of
	// agents down to this one, and its hooks followed by its callers'.
	agents   []string
	subHooks []Hooks
}

func (r *liveRun) drive(effects []loop.Effect) (*Result, error) {
	defer r.g.Wait() // every goroutine has answered by now; wait for them to return
	r.queue = effects
	done := r.ctx.Done()
	for r.result == nil {
		if r.next < len(r.queue) {
			e := r.queue[r.next]
			r.next++
			if r.next == len(r.queue) {
				r.queue, r.next = nil, 0
			}
			r.carryOut(e)
			continue
		}
		if r.inflight == 0 {
			return nil, fmt.Errorf("onion: agent %q: the loop stopped without finishing", r.a.name)
		}
		select {
		case in := <-r.inputs:
			r.inflight--
			r.step(in)
		case <-done:
			done = nil
			r.stop(loop.StopCanceled, r.ctx.Err())
		}
	}
	res := resultOf(*r.result)
	if r.result.StopReason == loop.StopCanceled {
		return res, fmt.Errorf("onion: run %s of agent %q canceled: %w", res.RunID, r.a.name, r.ctx.Err())
	}
	return res, r.err
}

// step feeds in to the loop and queues what it asks for next.
func (r *liveRun) step(in loop.Input) {
	in.Now = time.Now()
	effects, err := r.a.core.Step(r.st, in)
	if err != nil {
		// The driver answered something the loop did not ask: a bug here.
		panic(fmt.Sprintf("onion: the live runtime broke the loop's protocol: %v", err))
	}
	if len(r.queue) == 0 {
		r.queue = effects // the loop's slice is ours: no copy
		return
	}
	r.queue = append(r.queue, effects...)
}

// stop ends the run early with err.
func (r *liveRun) stop(reason loop.StopReason, err error) {
	if r.stopping {
		return
	}
	r.stopping = true
	close(r.halt)
	if r.err == nil && reason != loop.StopCanceled {
		r.err = err
	}
	r.step(loop.Input{Stop: &loop.Stop{Reason: reason, Error: err.Error()}})
}

// fail stops the run with a hook's error.
func (r *liveRun) fail(err error) {
	r.hooksOff = true
	r.stop(loop.StopFailed, err)
}

func (r *liveRun) carryOut(e loop.Effect) {
	if !r.stopping && r.ctx.Err() != nil && (e.Kind == loop.AskModel || e.Kind == loop.AskApproval || e.Kind == loop.RunCall) {
		r.stop(loop.StopCanceled, r.ctx.Err())
	}
	switch e.Kind {
	case loop.Emit:
		r.emit(e)
	case loop.AskModel:
		if r.stopping {
			return // the loop finished already
		}
		r.askModel(e.Request, e.Summary)
	case loop.AskApproval:
		if r.stopping {
			r.step(loop.Input{Approval: &loop.Approval{CallID: e.Call.ID, Reason: "the run stopped"}})
			return
		}
		r.approve(e.Call)
	case loop.RunCall:
		if r.stopping {
			r.step(loop.Input{Done: &loop.Done{CallID: e.Call.ID, Failure: loop.NotRun}})
			return
		}
		r.runCall(e.Call, e.Wait)
	case loop.CheckAnswer:
		if r.stopping {
			return // the loop finished already
		}
		var problems []string
		if r.answer != nil {
			problems = r.answer.check(e.Answer)
		}
		r.step(loop.Input{Checked: &loop.Checked{Problems: problems}})
	case loop.Finish:
		r.result = e.Result
	}
}

// askModel sends req; a summary for compaction is not streamed, since its
// text is not the answer.
func (r *liveRun) askModel(req *Request, summary bool) {
	a := r.a
	me := ModelEvent{RunID: r.st.RunID, Iteration: r.st.Iteration, WithTools: len(req.Tools) > 0, RunUsage: r.st.Result.Usage}
	for _, h := range a.cfg.hooks {
		if h.BeforeModel != nil {
			if err := h.BeforeModel(r.ctx, me); err != nil {
				r.fail(fmt.Errorf("onion: BeforeModel hook: %w", err))
				return
			}
		}
	}
	start := time.Now()
	var emit func(Event)
	if r.events != nil && !summary {
		emit = func(e Event) { r.events <- e }
	}
	ctx := r.startModel(req)
	resp, err := a.generate(ctx, req, emit)
	r.endModel(ctx, resp, err)
	if err != nil {
		if r.ctx.Err() != nil {
			r.stop(loop.StopCanceled, r.ctx.Err())
			return
		}
		r.stop(loop.StopFailed, fmt.Errorf("onion: agent %q: model request %d: %w", a.name, me.Iteration, err))
		return
	}
	u := resp.Usage
	u.Requests = 1
	me.Text, me.ToolCalls, me.Duration, me.Usage = resp.Message.Content, len(resp.Message.ToolCalls), time.Since(start), u
	me.RunUsage.Add(u)
	a.cfg.logger.LogAttrs(r.ctx, slog.LevelInfo, "model request",
		slog.String("agent", a.name), slog.String("run", r.st.RunID), slog.Int("iteration", me.Iteration),
		slog.Duration("duration", me.Duration), slog.Int("tool_calls", me.ToolCalls),
		slog.Int("prompt_tokens", u.PromptTokens), slog.Int("completion_tokens", u.CompletionTokens))
	for _, h := range a.cfg.hooks {
		if h.AfterModel != nil {
			if err := h.AfterModel(r.ctx, me); err != nil {
				r.fail(fmt.Errorf("onion: AfterModel hook: %w", err))
				return
			}
		}
	}
	r.step(loop.Input{Reply: resp})
}

// call is the Call a tool and an approver see for c.
func (r *liveRun) call(c loop.Call) Call {
	call := callOf(r.st.RunID, c)
	if r.parent != nil {
		call.Agents = r.path()
	}
	return call
}

func (r *liveRun) approve(c loop.Call) {
	t, _ := r.a.tools.Get(c.Name)
	call := r.call(c)
	cfg := r.a.callConfig()
	cfg.Approver = r.approver()
	ctx := r.toolCtx(c.ID)
	r.inflight++
	r.g.Go(func() error {
		// Sent however the approver ends, runtime.Goexit included.
		a := &loop.Approval{CallID: c.ID, Reason: "approver failed: it ended its goroutine (runtime.Goexit) without answering"}
		defer func() { r.inputs <- loop.Input{Approval: a} }()
		ok, reason := cfg.Approve(ctx, t, call)
		a.Granted, a.Reason = ok, reason
		return nil
	})
}

func (r *liveRun) runCall(c loop.Call, wait time.Duration) {
	t, _ := r.a.tools.Get(c.Name)
	call := r.call(c)
	cfg := r.a.callConfig()
	ctx := r.callerSummary(r.toolCtx(c.ID), t)
	if r.alone() {
		// Nothing else is in flight or about to be: run it here, with no
		// goroutine to start and no hand-off.
		d := loop.Done{CallID: c.ID, Failure: loop.NotRun}
		if sleep(ctx, wait) == nil {
			d = cfg.attempt(ctx, t, call, c.Arguments, nil)
		}
		r.step(loop.Input{Done: &d})
		return
	}
	r.inflight++
	// A first attempt starts before the next call does, so that calls
	// start in the order the loop asks for them; a retry waits its backoff
	// on its own.
	started := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(started) }) }
	if wait > 0 {
		signal()
	}
	r.g.Go(func() error {
		d := loop.Done{CallID: c.ID, Failure: loop.NotRun}
		if r.pause(wait) {
			d = cfg.attempt(ctx, t, call, c.Arguments, signal)
		}
		signal() // in case the tool never ran
		r.inputs <- loop.Input{Done: &d}
		return nil
	})
	<-started
}

// pause waits d, and reports false if the run ended or stopped first.
func (r *liveRun) pause(d time.Duration) bool {
	if d <= 0 {
		return r.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.ctx.Done():
	case <-r.halt:
	}
	return false
}

// alone reports whether the call about to run is the only one: none in
// flight, none queued. Such a call may run on the driving goroutine.
func (r *liveRun) alone() bool {
	if r.inflight > 0 {
		return false
	}
	for _, e := range r.queue[r.next:] {
		if e.Kind == loop.RunCall || e.Kind == loop.AskApproval {
			return false
		}
	}
	return true
}

func (r *liveRun) emit(e loop.Effect) {
	a := r.a
	switch e.Event {
	case loop.EventIteration:
		r.send(Event{Kind: EventIteration, Iteration: e.Iteration})
	case loop.EventCompacted:
		c := *e.Compaction
		a.cfg.logger.LogAttrs(r.ctx, slog.LevelInfo, "compaction",
			slog.String("agent", a.name), slog.String("run", r.st.RunID), slog.Int("iteration", c.Iteration),
			slog.Int("tokens_before", c.Before), slog.Int("tokens_after", c.After),
			slog.Int("tool_results", c.ToolResults), slog.Int("summarized", c.Summarized))
		r.send(Event{Kind: EventCompacted, Iteration: e.Iteration, Compaction: &c})
	case loop.EventToolStarted:
		tc := r.toolCall(e.Call)
		r.startTool(tc)
		if !r.hooksOff {
			for _, h := range r.hooks() {
				if h.BeforeTool != nil {
					if err := h.BeforeTool(r.ctx, ToolEvent{RunID: r.st.RunID, Call: tc, RunUsage: r.st.Result.Usage}); err != nil {
						r.fail(fmt.Errorf("onion: BeforeTool hook: %w", err))
						return
					}
				}
			}
		}
		r.sendCall(EventToolStarted, tc)
	case loop.EventToolFinished:
		tc := r.toolCall(e.Call)
		r.endTool(tc)
		if a.cfg.logger.Enabled(r.ctx, slog.LevelInfo) {
			attrs := []slog.Attr{slog.String("agent", a.name), slog.String("run", r.st.RunID), slog.String("tool", tc.Name),
				slog.String("call_id", tc.ID), slog.String("outcome", string(tc.Outcome)),
				slog.Int("attempts", tc.Attempts), slog.Duration("duration", tc.Duration)}
			if tc.Error != "" {
				attrs = append(attrs, slog.String("error", tc.Error))
			}
			a.cfg.logger.LogAttrs(r.ctx, slog.LevelInfo, "tool call", attrs...)
		}
		r.sendCall(EventToolFinished, tc)
		if !r.hooksOff {
			for _, h := range r.hooks() {
				if h.AfterTool != nil {
					if err := h.AfterTool(r.ctx, ToolEvent{RunID: r.st.RunID, Call: tc, RunUsage: r.st.Result.Usage}); err != nil {
						r.fail(fmt.Errorf("onion: AfterTool hook: %w", err))
						return
					}
				}
			}
		}
	}
}

// sendCall reports a tool call: to the run's stream, or for a sub-run to
// the outermost stream, as a call of the path of agents (tc.Agents).
func (r *liveRun) sendCall(kind EventKind, tc ToolCall) {
	switch {
	case r.events != nil:
		r.events <- Event{Kind: kind, Iteration: tc.Iteration, Call: &tc}
	case r.parent != nil && r.parent.events != nil:
		r.parent.events <- Event{Kind: kind, Iteration: tc.Iteration, Call: &tc}
	}
}

// toolCall is the ToolCall that events and hooks report for c.
func (r *liveRun) toolCall(c loop.Call) ToolCall {
	tc := toolCall(c)
	if r.parent != nil {
		tc.Agents = r.path()
	}
	return tc
}

func (r *liveRun) send(e Event) {
	if r.events != nil {
		r.events <- e
	}
}

// resultOf is the Result of a run of an agent's loop, as Run returns it
// (see drive.ResultOf).
func resultOf(lr loop.Result) *Result {
	res := &Result{RunID: lr.RunID, Output: lr.Output, Iterations: lr.Iterations, StopReason: lr.StopReason, Usage: lr.Usage,
		Compactions: slices.Clone(lr.Compactions), ByAgent: maps.Clone(lr.ByAgent)}
	if len(lr.Calls) > 0 {
		res.ToolCalls = make([]ToolCall, len(lr.Calls))
		for i, c := range lr.Calls {
			res.ToolCalls[i] = toolCall(c)
		}
	}
	return res
}

// callOf is the Call that the tool and the approver of the loop's call c
// of run runID see (see drive.CallOf).
func callOf(runID string, c loop.Call) Call {
	return Call{ID: c.ID, Name: c.Name, Intent: Intent(c.Intent), Arguments: callArguments(c.Arguments),
		RunID: runID, Attempt: max(c.Attempts, 1), IdempotencyKey: runID + ":" + c.ID}
}
