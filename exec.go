package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/onionkit/onion/loop"
)

// This file is the one way to run one tool call: the approval, then one
// attempt under the timeout, with panics, runtime.Goexit, timeouts and
// cancellation turned into outcomes, and the output capped. The Agent
// runs every call through it, and so must any other runtime.

// ErrOutcomeUnknown is wrapped in a tool's error to say that the tool may or
// may not have taken effect, as when the connection to a remote tool broke
// mid-call. A write or delete failing with it ends as OutcomeUnknown.
var ErrOutcomeUnknown = errors.New("outcome unknown")

// SkippedPrefix begins the message of every skipped call.
const SkippedPrefix = loop.SkippedPrefix

// callConfig is what applies to a single tool call of an agent (see
// drive.CallConfig, which runtimes use): its approver, the bound on one
// attempt and the cap on the text the model reads. The zero value has no
// approver (a call that needs approval is denied), no timeout and no cap.
type callConfig struct {
	Approver  func(ctx context.Context, c Call) (bool, error)
	Timeout   time.Duration
	MaxOutput int
}

// callConfig is the settings the agent runs each call with (see
// drive.CallConfigOf).
func (a *Agent) callConfig() callConfig {
	return callConfig{Approver: a.cfg.approver, Timeout: a.cfg.toolTimeout, MaxOutput: a.cfg.maxToolOutput}
}

// runOne runs the call c of t once, the way an Agent runs it (see
// drive.RunCall): approval when t needs it, then one attempt under
// cfg.Timeout with c in the context, every text capped at cfg.MaxOutput.
func runOne(ctx context.Context, t *Tool, c Call, cfg callConfig) ToolCall {
	if c.Attempt == 0 {
		c.Attempt = 1
	}
	if c.Name == "" {
		c.Name = t.name
	}
	if c.Intent == "" {
		c.Intent = t.intent
	}
	lc := loop.Call{ID: c.ID, Name: t.name, Intent: loop.Intent(t.intent), Arguments: string(c.Arguments)}
	start := time.Now()
	if ok, reason := cfg.Approve(ctx, t, c); !ok {
		lc.Deny(reason)
	} else {
		lc.Attempts = 1
		lc.End(cfg.Attempt(ctx, t, c, string(c.Arguments)), cfg.MaxOutput)
	}
	tc := toolCall(lc)
	tc.Duration = time.Since(start)
	return tc
}

// Approve decides whether the call c of t may run: yes when t does not
// need approval for it (RequireApproval, ApproveIf), else what
// cfg.Approver says. When it may not, reason says why: "no approver
// configured", "approver failed: …", or "the approver said no".
func (cfg callConfig) Approve(ctx context.Context, t *Tool, c Call) (ok bool, reason string) {
	if !t.NeedsApproval(ctx, c) {
		return true, ""
	}
	if cfg.Approver == nil {
		return false, "no approver configured"
	}
	defer func() {
		if r := recover(); r != nil {
			ok, reason = false, fmt.Sprintf("approver failed: it panicked: %v", r)
		}
	}()
	yes, err := cfg.Approver(ctx, c)
	switch {
	case err != nil:
		return false, "approver failed: " + err.Error()
	case !yes:
		return false, "the approver said no"
	}
	return true, ""
}

// Attempt makes one attempt of the call c of t with the model's argument
// text args, under cfg.Timeout, and says how it ended as the loop reads
// it: the tool's text, or the kind of failure and its words. The output is
// not capped here; loop.Call.End caps it.
func (cfg callConfig) Attempt(ctx context.Context, t *Tool, c Call, args string) loop.Done {
	return cfg.attempt(ctx, t, c, args, nil)
}

// attempt is Attempt, calling started (when not nil) just before the tool
// runs, so that a runtime can start calls in order.
func (cfg callConfig) attempt(ctx context.Context, t *Tool, c Call, args string, started func()) loop.Done {
	out, images, err := cfg.runTool(ctx, t, c, args, started)
	d := loop.Done{CallID: c.ID, Output: out, Images: images}
	var cut *cutError
	switch {
	case err == nil:
	case errors.As(err, &cut):
		d.Failure, d.Error = loop.Cut, cut.reason
	case errors.Is(err, ErrInvalidArguments):
		d.Failure, d.Error = loop.BadArguments, err.Error()
	default:
		d.Failure, d.Error = loop.ToolFailed, err.Error()
	}
	return d
}

// cutError is a call that was stopped before it returned.
type cutError struct{ reason string }

func (e *cutError) Error() string { return "the tool was cut off: " + e.reason }

// runTool runs one attempt under the tool timeout: the tool's text and
// its images, those it returned after those it showed (ShowImages). A
// tool that ignores its context is abandoned when the timeout passes: its
// goroutine ends on its own, and the call ends as cut.
func (cfg callConfig) runTool(ctx context.Context, t *Tool, c Call, args string, started func()) (string, []Image, error) {
	ctx, cs := withCall(ctx, c)
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	type result struct {
		out    string
		images []Image
		err    error
	}
	done := make(chan result, 1)
	go func() {
		finished := false
		defer func() {
			if !finished { // runtime.Goexit: recover does not see it
				done <- result{err: &cutError{reason: "it ended its goroutine (runtime.Goexit) without returning"}}
			}
		}()
		if started != nil {
			started()
		}
		out, images, err := t.output(ctx, args)
		finished = true
		done <- result{out, images, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		if t.sub != nil {
			r = <-done
		} else {
			r.err = ctx.Err()
		}
	}
	shown := cs.shown()
	if r.err == nil {
		if len(shown) > 0 {
			r.images = append(shown[:len(shown):len(shown)], r.images...)
		}
		return r.out, r.images, nil
	}
	var pe *PanicError
	switch {
	case errors.Is(r.err, ErrOutcomeUnknown):
		return "", nil, &cutError{reason: r.err.Error()}
	case errors.As(r.err, &pe):
		return "", nil, &cutError{reason: fmt.Sprintf("it panicked: %v", pe.Value)}
	case ctx.Err() != nil && (errors.Is(r.err, context.DeadlineExceeded) || errors.Is(r.err, context.Canceled) || errors.Is(r.err, ctx.Err())):
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && cfg.Timeout > 0 {
			return "", nil, &cutError{reason: "it timed out after " + cfg.Timeout.String()}
		}
		return "", nil, &cutError{reason: "the run was canceled"}
	}
	return "", nil, r.err
}

// callArguments is the model's argument text as a Call carries it: JSON,
// or the text as a JSON string when it is not JSON.
func callArguments(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// toolCall is the loop's record of a call as a Result reports it.
func toolCall(c loop.Call) ToolCall {
	return ToolCall{ID: c.ID, Name: c.Name, Intent: Intent(c.Intent), Arguments: c.Arguments, Output: c.Output, Error: c.Error,
		Outcome: c.Outcome, Attempts: c.Attempts, Duration: c.Duration, Iteration: c.Iteration, ApprovalWait: c.ApprovalWait, Images: c.Images}
}
