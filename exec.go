package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// This file runs the tool calls of one model response: reads together
// (bounded by MaxParallel), writes and deletes one at a time in the
// model's order, later writes skipped once one did not succeed, approval
// before the calls that need it, and an outcome for every call.

// ErrOutcomeUnknown is wrapped in a tool's error to say that the tool may or
// may not have taken effect, as when the connection to a remote tool broke
// mid-call. A write or delete failing with it ends as OutcomeUnknown.
var ErrOutcomeUnknown = errors.New("outcome unknown")

// failureText is the text the model reads for a call whose tool failed
// with err: its arguments did not fit, it returned an error, or it
// panicked. (mcpserver sends err's text with isError set instead.)
func failureText(err error) string { return "error: " + err.Error() }

// SkippedPrefix begins the message of every skipped call.
const SkippedPrefix = "the tool did not run, so it is safe to call again"

func (a *Agent) execute(ctx context.Context, s *seam, runID string, iter int, calls []ToolRequest) ([]ToolCall, error) {
	out := make([]ToolCall, len(calls))
	tools := make([]*Tool, len(calls)) // nil for an unknown name
	var reads, writes []int
	for i, tc := range calls {
		out[i] = ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Iteration: iter}
		t, ok := a.tools.Get(tc.Name)
		if !ok {
			out[i].Outcome = Failed
			out[i].Error = "unknown tool"
			out[i].Output = fmt.Sprintf("Tool '%s' does not exist. Available tools: %s.", tc.Name, strings.Join(a.tools.Names(), ", "))
			continue
		}
		out[i].Intent = t.intent
		tools[i] = t
		if t.intent == Read {
			reads = append(reads, i)
		} else {
			writes = append(writes, i)
		}
	}

	var mu sync.Mutex // guards hookErr
	var hookErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if hookErr == nil {
			hookErr = err
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, a.cfg.maxParallel)
	for _, i := range reads {
		wg.Add(1)
		s.spawn(func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				err := fmt.Errorf("the run was canceled before the tool ran: %w", ctx.Err())
				out[i].Outcome, out[i].Output, out[i].Error = Failed, failureText(err), err.Error()
				return
			}
			if err := a.callOne(ctx, s, runID, tools[i], &out[i]); err != nil {
				fail(err)
			}
		})
	}
	var broken *ToolCall
	for _, i := range writes {
		c := &out[i]
		if broken != nil || ctx.Err() != nil {
			c.Outcome = Skipped
			c.Output = SkippedPrefix + "."
			if broken != nil {
				c.Output = fmt.Sprintf("%s: the earlier call %s (id %s) in this response ended %s, so the writes after it were not run. Read that result, then decide whether to call this again.",
					SkippedPrefix, broken.Name, broken.ID, broken.Outcome)
			}
			s.emit(Event{Kind: EventToolFinished, Iteration: iter, Call: ptr(*c)})
			continue
		}
		if err := a.callOne(ctx, s, runID, tools[i], c); err != nil {
			fail(err)
			break
		}
		if c.Outcome != Succeeded {
			broken = c
		}
	}
	wg.Wait()
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, hookErr
}

func ptr[T any](v T) *T { return &v }

// callOne asks for approval if needed and runs the call, with retries
// where the intent allows them. Its error is a hook's.
func (a *Agent) callOne(ctx context.Context, s *seam, runID string, t *Tool, tc *ToolCall) error {
	args := json.RawMessage(tc.Arguments)
	if !json.Valid(args) {
		args, _ = json.Marshal(tc.Arguments)
	}
	call := Call{ID: tc.ID, Name: tc.Name, Intent: t.intent, Arguments: args, RunID: runID, Attempt: 1, IdempotencyKey: runID + ":" + tc.ID}
	for _, h := range a.cfg.hooks {
		if h.BeforeTool != nil {
			if err := h.BeforeTool(ctx, ToolEvent{RunID: runID, Call: *tc}); err != nil {
				return fmt.Errorf("onion: BeforeTool hook: %w", err)
			}
		}
	}
	s.emit(Event{Kind: EventToolStarted, Iteration: tc.Iteration, Call: ptr(*tc)})
	start := s.now()

	if t.NeedsApproval(ctx, call) && !a.approved(ctx, s, call) {
		tc.Outcome = Denied
		tc.Output = "the user denied this call, so the tool did not run. Do not call it again unless the user asks for it."
	} else {
		attempts := 1
		if t.intent == Read || t.idempotent {
			attempts += a.cfg.toolRetries
		}
		for n := 1; n <= attempts; n++ {
			call.Attempt = n
			tc.Attempts = n
			out, err := s.runTool(ctx, t, call, tc.Arguments)
			if err == nil {
				tc.Outcome, tc.Output, tc.Error = Succeeded, a.capOutput(out), ""
				break
			}
			tc.Error = err.Error()
			tc.Outcome = Failed
			tc.Output = a.capOutput(failureText(err))
			var cut *cutError
			if errors.As(err, &cut) && t.intent != Read {
				tc.Outcome = OutcomeUnknown
				tc.Output = a.capOutput(fmt.Sprintf("outcome unknown: the %s call started but was cut off (%s), so nobody knows whether it took effect. Check before calling it again.", t.intent, cut.reason))
			}
			if n == attempts || ctx.Err() != nil {
				break
			}
			if err := s.sleep(ctx, s.backoff(n-1)); err != nil {
				break
			}
		}
	}
	tc.Duration = s.now().Sub(start)
	a.cfg.logger.LogAttrs(ctx, slog.LevelInfo, "tool call",
		slog.String("agent", a.name), slog.String("run", runID), slog.String("tool", tc.Name),
		slog.String("call_id", tc.ID), slog.String("outcome", string(tc.Outcome)),
		slog.Int("attempts", tc.Attempts), slog.Duration("duration", tc.Duration))
	s.emit(Event{Kind: EventToolFinished, Iteration: tc.Iteration, Call: ptr(*tc)})
	for _, h := range a.cfg.hooks {
		if h.AfterTool != nil {
			if err := h.AfterTool(ctx, ToolEvent{RunID: runID, Call: *tc}); err != nil {
				return fmt.Errorf("onion: AfterTool hook: %w", err)
			}
		}
	}
	return nil
}

// approved asks the approver; no approver, an error, a panic or a "no"
// all mean the call does not run.
func (a *Agent) approved(ctx context.Context, s *seam, c Call) (ok bool) {
	if s.approve == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	yes, err := s.approve(ctx, c)
	return yes && err == nil
}

// cutError is a call that was stopped before it returned.
type cutError struct{ reason string }

func (e *cutError) Error() string { return "the tool was cut off: " + e.reason }

// runTool runs one attempt under the tool timeout. A tool that ignores its
// context is abandoned when the timeout passes: its goroutine ends on its
// own, and the call ends as cut.
func (a *Agent) runTool(ctx context.Context, t *Tool, c Call, args string) (string, error) {
	ctx = withCall(ctx, &c)
	if a.cfg.toolTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.cfg.toolTimeout)
		defer cancel()
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		finished := false
		defer func() {
			if !finished { // runtime.Goexit: recover does not see it
				done <- result{err: &cutError{reason: "it ended its goroutine (runtime.Goexit) without returning"}}
			}
		}()
		out, err := t.Call(ctx, args)
		finished = true
		done <- result{out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	if r.err == nil {
		return r.out, nil
	}
	var pe *PanicError
	switch {
	case errors.Is(r.err, ErrOutcomeUnknown):
		return "", &cutError{reason: r.err.Error()}
	case errors.As(r.err, &pe):
		return "", &cutError{reason: fmt.Sprintf("it panicked: %v", pe.Value)}
	case ctx.Err() != nil && (errors.Is(r.err, context.DeadlineExceeded) || errors.Is(r.err, context.Canceled) || errors.Is(r.err, ctx.Err())):
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", &cutError{reason: "it timed out after " + a.cfg.toolTimeout.String()}
		}
		return "", &cutError{reason: "the run was canceled"}
	}
	return "", r.err
}

// capOutput cuts tool output to MaxToolOutput bytes, with a marker.
func (a *Agent) capOutput(s string) string {
	limit := a.cfg.maxToolOutput
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[output cut: " + strconv.Itoa(len(s)-cut) + " of " + strconv.Itoa(len(s)) + " bytes not shown]"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
