// Package drive is what a runtime needs to drive an agent's loop itself,
// as package temporal does, instead of Agent.Run and Agent.Stream: the
// loop (a deterministic state machine, see package loop), the settings of
// a run and of a call, the agent's instruments, and the Result and Call
// values Run would make. A program that runs agents with Run, Stream or
// Ask needs none of it.
//
// A runtime starts a run with Loop(a).Start, carries out each effect the
// loop returns and reports it with Step: a model request with
// LanguageModel (retried as RunConfig says, by onion.Retryable), a tool
// call with onion.RunCall or CallConfig(a).Attempt, an approval with
// CallConfig(a).Approve; it reports to Instrument(a) what Run reports, and
// turns the loop's result into the Result Run returns with ResultOf.
package drive

import (
	"context"
	"log/slog"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/bridge"
	"github.com/onionkit/onion/loop"
)

// Loop returns the agent's loop: the rules of its runs as a deterministic
// state machine, for a runtime other than Run and Stream to drive. The
// agent's tools are a.Tools(); the settings of one call, CallConfig.
func Loop(a *onion.Agent) *loop.Loop { return bridge.Loop(a) }

// CallConfigOf returns the settings the agent runs each call with: its
// approver, its tool timeout and its cap on output.
func CallConfigOf(a *onion.Agent) CallConfig {
	s := bridge.CallConfig(a)
	approver, _ := s.Approver.(func(context.Context, onion.Call) (bool, error))
	return CallConfig{Approver: approver, Timeout: s.Timeout, MaxOutput: s.MaxOutput}
}

// CallConfig is what applies to a single tool call of an agent. The zero
// value has no approver (a call that needs approval is denied), no
// timeout and no cap on the output; an agent's (CallConfigOf) has its
// options, with onion.DefaultToolTimeout unless onion.ToolTimeout is set.
type CallConfig struct {
	// Approver decides the calls that need approval (see onion.Approver).
	Approver func(ctx context.Context, c onion.Call) (bool, error)
	// Timeout bounds one attempt (see onion.ToolTimeout and
	// onion.DefaultToolTimeout); 0 for none.
	Timeout time.Duration
	// MaxOutput caps the bytes of the text the model reads (see
	// onion.MaxToolOutput); 0 for no cap.
	MaxOutput int
}

func (cfg CallConfig) settings() bridge.CallSettings {
	var approver any
	if cfg.Approver != nil {
		approver = cfg.Approver
	}
	return bridge.CallSettings{Approver: approver, Timeout: cfg.Timeout, MaxOutput: cfg.MaxOutput}
}

// Approve decides whether the call c of t may run: yes when t does not
// need approval for it (onion.RequireApproval, onion.ApproveIf), else what
// cfg.Approver says. When it may not, reason says why: "no approver
// configured", "approver failed: …", or "the approver said no".
func (cfg CallConfig) Approve(ctx context.Context, t *onion.Tool, c onion.Call) (ok bool, reason string) {
	return bridge.Approve(ctx, t, c, cfg.settings())
}

// Attempt makes one attempt of the call c of t with the model's argument
// text args, under cfg.Timeout, and says how it ended as the loop reads
// it: the tool's text, or the kind of failure and its words. The output is
// not capped here; loop.Call.End caps it.
func (cfg CallConfig) Attempt(ctx context.Context, t *onion.Tool, c onion.Call, args string) loop.Done {
	return bridge.Attempt(ctx, t, c, args, cfg.settings())
}

// RunCall runs the call c of t once, the way an Agent runs it: approval
// when t needs it (no approver, an approver's error or panic, or its no
// mean Denied, with the reason in Error), then one attempt under
// cfg.Timeout with c in the context (onion.CallInfo), a panic or
// runtime.Goexit of the tool ending the call as cut (OutcomeUnknown for a
// write), and every text capped at cfg.MaxOutput. c.Arguments go to the
// tool as they are (send {} for none); c.Name and c.Intent default to
// t's. Retries are the caller's: see CallConfig.Attempt.
//
// The result's Outcome, Output (what a model reads) and Error say how the
// call ended; Attempts is 0 when it did not run.
func RunCall(ctx context.Context, t *onion.Tool, c onion.Call, cfg CallConfig) onion.ToolCall {
	return bridge.RunCall(ctx, t, c, cfg.settings()).(onion.ToolCall)
}

// RunConfig is what applies to a whole run of an agent beyond its loop's
// rules (Loop) and the settings of one call (CallConfig): the retries of
// model requests, the hooks and the logger.
type RunConfig struct {
	// Retries is how many times a failed model request is sent again
	// when onion.Retryable says it may pass (see onion.Retries).
	Retries int
	// BackoffMin and BackoffMax bound the exponential backoff between
	// retries (see onion.RetryBackoff).
	BackoffMin, BackoffMax time.Duration
	// MaxRetryAfter is the longest Retry-After the agent waits; a server
	// asking for longer fails the request (see onion.MaxRetryAfter).
	MaxRetryAfter time.Duration
	// Hooks are the agent's hooks, in the order they run (see
	// onion.WithHooks).
	Hooks []onion.Hooks
	// Logger is the agent's logger (see onion.Logger); never nil.
	Logger *slog.Logger
}

// RunConfigOf returns the settings the agent runs each run with.
func RunConfigOf(a *onion.Agent) RunConfig {
	s := bridge.Run(a)
	hooks, _ := s.Hooks.([]onion.Hooks)
	return RunConfig{Retries: s.Retries, BackoffMin: s.BackoffMin, BackoffMax: s.BackoffMax,
		MaxRetryAfter: s.MaxRetryAfter, Hooks: hooks, Logger: s.Logger}
}

// RunInfo is what the agent tells its instruments of the run runID of
// prompt.
func RunInfo(a *onion.Agent, runID, prompt string) onion.RunInfo {
	return bridge.RunInfo(a, runID, prompt).(onion.RunInfo)
}

// Instrument returns the agent's instruments (onion.WithInstrument) as
// one: it calls them in the order given, the End methods in reverse, and
// is an onion.RunAttacher that attaches those of them that are. It is nil
// when the agent has none.
func Instrument(a *onion.Agent) onion.Instrument {
	in, _ := bridge.Instrument(a).(onion.Instrument)
	return in
}

// PromptImages returns the images onion.WithImages put in ctx, for the
// prompt of a run that a runtime starts, and ctx without them, to hand on
// (as Run does, so that an agent run inside a tool does not send them
// again). The images are not checked: loop.CheckImages does that.
func PromptImages(ctx context.Context) (context.Context, []onion.Image) {
	return bridge.PromptImages(ctx)
}

// ResultOf is the Result of a run of an agent's loop, as Run returns it.
func ResultOf(lr loop.Result) *onion.Result { return bridge.ResultOf(lr).(*onion.Result) }

// CallOf is the Call that the tool and the approver of the loop's call c
// of run runID see: the model's arguments as JSON (as a JSON string when
// they are not JSON), the attempt, and the idempotency key runID:ID, the
// same on every attempt. A runtime with a steadier name for the call, such
// as a durable workflow's, may put that in IdempotencyKey instead.
func CallOf(runID string, c loop.Call) onion.Call { return bridge.CallOf(runID, c).(onion.Call) }

// SubAgents returns the agents a was given as tools (see "Agents as
// tools" in package onion), in the order NewAgent was given them.
func SubAgents(a *onion.Agent) []*onion.Agent {
	subs := bridge.SubAgents(a)
	out := make([]*onion.Agent, len(subs))
	for i, s := range subs {
		out[i] = s.(*onion.Agent)
	}
	return out
}

// SubAgent returns the agent that t hands its task to when t is an agent
// given as a tool, and nil for any other tool. Such a tool's arguments are
// {"task": "…"}; Run runs it as a fresh run of that agent, and a runtime
// may run it as a run of its own (package temporal: a child workflow).
func SubAgent(t *onion.Tool) *onion.Agent {
	sub, _ := bridge.SubAgent(t).(*onion.Agent)
	return sub
}

// SubAgentTask returns the prompt of the run that a call of t, an agent
// given as a tool (SubAgent(t) is not nil), with the model's arguments
// args hands that agent, history being the caller's conversation up to
// the call: the task as text, or the JSON of the typed task of an agent
// built with onion.InputType, after a summary of history when the agent
// was built with onion.CallerSummary. Arguments that do not fit are an
// error that wraps onion.ErrInvalidArguments; a t that is no agent is an
// error too.
func SubAgentTask(t *onion.Tool, args string, history []loop.Message) (string, error) {
	return bridge.SubTask(t, args, history)
}

// SubAgentAnswer returns what the answers of a, as a tool, are held to:
// the AnswerSpec of the type given to onion.OutputType, nil for an agent
// that answers in text.
func SubAgentAnswer(a *onion.Agent) *onion.AnswerSpec {
	spec, _ := bridge.SubAnswer(a).(*onion.AnswerSpec)
	return spec
}

// SubAgentOutput returns what the caller's model reads of output, the
// final answer of a run of a as a tool: the text, or for an agent built
// with onion.OutputType the answer's JSON, checked; an answer that does
// not fit is an *onion.AnswerError.
func SubAgentOutput(a *onion.Agent, output string) (string, error) {
	return bridge.SubOutput(a, output)
}
