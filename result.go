package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/onionkit/onion/loop"
)

// StopReason says why a run ended.
type StopReason = loop.StopReason

// The reasons a run ends.
const (
	// StopNatural: the model answered without asking for tools.
	StopNatural = loop.StopNatural
	// StopMaxIterations: the cap was reached and the model answered, without
	// tools, from what it had gathered.
	StopMaxIterations = loop.StopMaxIterations
	// StopCanceled: the caller's context ended the run.
	StopCanceled = loop.StopCanceled
	// StopFailed: the run ended with an error: the model endpoint kept
	// failing, or a hook returned one.
	StopFailed = loop.StopFailed
	// StopBudget: another round of tool calls would not have fit the
	// token budget (see TokenBudget), and the model answered, without
	// tools, from what it had gathered.
	StopBudget = loop.StopBudget
	// StopLength: the model's last reply was cut by its output token limit
	// or by the end of its context window, so Output is the cut text, not
	// a whole answer. Raise the model's output limit or ask for less; for
	// a full context window, compact sooner (see CompactAfter).
	StopLength = loop.StopLength
	// StopRefused: the provider stopped the model's last reply for safety
	// or policy (OpenAI's content_filter, Anthropic's refusal, Gemini's
	// SAFETY and kin): Output holds what text came, which is no answer,
	// and the reply's tool calls were not run. The run's error wraps
	// ErrRefused and names the finish reason.
	StopRefused = loop.StopRefused
)

// ErrRefused is wrapped in the error of a run that ended StopRefused:
// the provider refused the reply. A Conversation keeps no turn of it.
var ErrRefused = errors.New("the provider refused the reply")

// Outcome is how one tool call ended.
type Outcome = loop.Outcome

// The outcomes of a tool call.
const (
	Succeeded = loop.Succeeded
	// Failed: the tool returned an error or panicked, its arguments did
	// not fit, the model named no such tool, or a read was cut off.
	Failed = loop.Failed
	// Denied: the call needed approval and did not get it; it did not run.
	Denied = loop.Denied
	// Skipped: the call did not run, because an earlier write of the same
	// response did not succeed, because the run stopped first, or because
	// the reply that asked for it was cut by the output token limit.
	Skipped = loop.Skipped
	// OutcomeUnknown: a write or delete started and was cut (timeout,
	// cancellation, panic), so nobody knows whether it took effect.
	OutcomeUnknown = loop.OutcomeUnknown
)

// ToolCall records one tool call of a run.
type ToolCall struct {
	ID        string        `json:"id"`               // the model's call ID (or one the agent gave it)
	Name      string        `json:"name"`             // the tool's name, as the model sent it
	Intent    Intent        `json:"intent,omitempty"` // empty for an unknown tool
	Arguments string        `json:"arguments"`        // the raw arguments, as the model sent them
	Output    string        `json:"output"`           // the text the model read
	Error     string        `json:"error,omitempty"`  // the error, when the call did not succeed
	Outcome   Outcome       `json:"outcome"`          // how the call ended
	Attempts  int           `json:"attempts"`         // 0 when it never ran
	Duration  time.Duration `json:"duration"`         // from start to outcome, approval included
	Iteration int           `json:"iteration"`        // the round of tool calls, from 1
	// ApprovalWait is the part of Duration spent waiting for approval:
	// Duration minus ApprovalWait is how long the tool itself took.
	ApprovalWait time.Duration `json:"approval_wait,omitempty"`
	// Agents is the path of agents whose run made the call, from the
	// outermost down ("lead", "reader"), for a call of an agent given as a
	// tool, as events and hooks report it; empty for the run's own calls.
	Agents []string `json:"agents,omitempty"`
	// Images are the images the tool returned or showed, which the model
	// was shown after Output: set in the ToolCall of drive.RunCall and of
	// EventToolFinished, left out of a Result's (its conversation's tool
	// message holds them).
	Images []Image `json:"images,omitempty"`
}

// Usage counts the tokens of a run's model requests (or of one Response):
// see loop.Usage.
type Usage = loop.Usage

// Result is the answer of a run and what happened on the way.
type Result struct {
	RunID      string     `json:"run_id"`      // the run's ID, also in every Call
	Output     string     `json:"output"`      // the answer
	Iterations int        `json:"iterations"`  // rounds of tool calls
	StopReason StopReason `json:"stop_reason"` // why the run ended
	ToolCalls  []ToolCall `json:"tool_calls"`  // every call, in the model's order within a round
	Usage      Usage      `json:"usage"`       // summed over the run's model requests
	// Compactions are the run's compactions, in order (see CompactAfter).
	Compactions []Compaction `json:"compactions,omitempty"`
	// ByAgent breaks Usage down by agent when the run handed tasks to
	// agents given as tools: each agent's own requests, keyed by its path
	// from this run's agent down, joined by "/" ("lead", "lead/reader").
	// Usage is their sum. Nil when no sub-agent ran.
	ByAgent map[string]Usage `json:"by_agent,omitempty"`
}

// EventKind names what an Event reports.
type EventKind string

// The kinds of events a run emits.
const (
	EventIteration    EventKind = "iteration"     // a model request is about to be sent
	EventTextDelta    EventKind = "text_delta"    // Text holds the next piece of the reply
	EventToolStarted  EventKind = "tool_started"  // Call holds the call
	EventToolFinished EventKind = "tool_finished" // Call holds the call and its outcome
	EventDone         EventKind = "done"          // Result holds the result
)

// Event is one thing that happened during a run.
type Event struct {
	Kind      EventKind
	Iteration int       // the round, from 1 (EventIteration, tool events)
	Text      string    // EventTextDelta: the next piece of text
	Call      *ToolCall // tool events: the call
	Result    *Result   // EventDone: the result
	// Compaction is what an EventCompacted compaction did.
	Compaction *Compaction
	// Answer is, on the EventDone of AskStream, the typed answer: a value
	// of the type asked for.
	Answer any
}

// Hooks are funcs the agent calls as a run goes. Any may be nil. A hook's
// error stops the run with that error: calls not yet started are skipped,
// those running finish, and no further hook is called but OnError. Hooks
// run one at a time, on the goroutine that drives the run: the tool hooks
// in the order the calls start and end. A Hooks value is an Option.
type Hooks struct {
	BeforeModel func(ctx context.Context, e ModelEvent) error // before each model request
	AfterModel  func(ctx context.Context, e ModelEvent) error // after each reply
	BeforeTool  func(ctx context.Context, e ToolEvent) error  // before a call runs (or is denied)
	AfterTool   func(ctx context.Context, e ToolEvent) error  // after it has an outcome
	OnError     func(ctx context.Context, err error)          // when a run ends with an error
	OnComplete  func(ctx context.Context, r *Result)          // when a run ends with an answer
}

// ModelEvent is a model request (before) or its reply (after).
type ModelEvent struct {
	RunID     string // the run's ID
	Iteration int    // the request's round, from 1
	// WithTools is false for the last request after the cap.
	WithTools bool
	// After the request: the reply text, the tool calls asked for, tokens.
	Text      string
	ToolCalls int
	Usage     Usage
	Duration  time.Duration
	// RunUsage is the run's usage so far: the replies before the request,
	// and after it this reply too.
	RunUsage Usage
}

// ToolEvent is a tool call about to run (before) or finished (after).
type ToolEvent struct {
	RunID string   // the run's ID
	Call  ToolCall // the call; its outcome after it ran
	// RunUsage is the run's usage so far, summed over its replies.
	RunUsage Usage
}

// applyAgent makes a Hooks value an Option: pass it to NewAgent as it is.
func (h Hooks) applyAgent(c *config) error {
	c.hooks = append(c.hooks, h)
	return nil
}

// WithHooks adds hooks to the agent; several sets run in the order given.
// A Hooks value passed to NewAgent does the same.
func WithHooks(h ...Hooks) Option {
	return optionFunc(func(c *config) error { c.hooks = append(c.hooks, h...); return nil })
}

// UnmarshalJSON reads a ToolCall as MarshalJSON writes it, and also with
// its durations written as Go writes them ("1.2s"), as the onion command's
// -json output has them.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	type plain ToolCall // without this method
	var v struct {
		*plain
		Duration     json.RawMessage `json:"duration"`
		ApprovalWait json.RawMessage `json:"approval_wait"`
	}
	v.plain = (*plain)(c)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var err error
	if c.Duration, err = durationJSON(v.Duration); err != nil {
		return fmt.Errorf("tool call %q: duration: %w", c.ID, err)
	}
	if c.ApprovalWait, err = durationJSON(v.ApprovalWait); err != nil {
		return fmt.Errorf("tool call %q: approval_wait: %w", c.ID, err)
	}
	return nil
}

// durationJSON reads a duration as integer nanoseconds or a Go duration
// string; absent or null is 0.
func durationJSON(b json.RawMessage) (time.Duration, error) {
	if len(b) == 0 || string(b) == "null" {
		return 0, nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, err
		}
		return time.ParseDuration(s)
	}
	var n int64
	err := json.Unmarshal(b, &n)
	return time.Duration(n), err
}
