package onion

import (
	"context"
	"time"
)

// StopReason says why a run ended.
type StopReason string

// The reasons a run ends.
const (
	// StopNatural: the model answered without asking for tools.
	StopNatural StopReason = "natural"
	// StopMaxIterations: the cap was reached and the model answered, without
	// tools, from what it had gathered.
	StopMaxIterations StopReason = "max_iterations"
	// StopCanceled: the caller's context ended the run.
	StopCanceled StopReason = "canceled"
)

// Outcome is how one tool call ended.
type Outcome string

// The outcomes of a tool call.
const (
	Succeeded Outcome = "succeeded"
	Failed    Outcome = "failed"
	// Denied: the call needed approval and did not get it; it did not run.
	Denied Outcome = "denied"
	// Skipped: an earlier write of the same response did not succeed, so
	// this write did not run.
	Skipped Outcome = "skipped"
	// OutcomeUnknown: a write or delete started and was cut (timeout,
	// cancellation, panic), so nobody knows whether it took effect.
	OutcomeUnknown Outcome = "outcome_unknown"
)

// ToolCall records one tool call of a run.
type ToolCall struct {
	ID        string        `json:"id"`
	Name      string        `json:"name"`
	Intent    Intent        `json:"intent,omitempty"`
	Arguments string        `json:"arguments"`
	Output    string        `json:"output"` // the text the model read
	Error     string        `json:"error,omitempty"`
	Outcome   Outcome       `json:"outcome"`
	Attempts  int           `json:"attempts"`
	Duration  time.Duration `json:"duration"`
	Iteration int           `json:"iteration"`
}

// Usage is the token usage summed over a run's model requests.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	Requests         int `json:"requests"`
}

// Result is the answer of a run and what happened on the way.
type Result struct {
	RunID      string     `json:"run_id"`
	Output     string     `json:"output"`
	Iterations int        `json:"iterations"` // rounds of tool calls
	StopReason StopReason `json:"stop_reason"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	Usage      Usage      `json:"usage"`
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
	Iteration int
	Text      string
	Call      *ToolCall
	Result    *Result
}

// Hooks are funcs the agent calls as a run goes. Any may be nil. A hook's
// error stops the run with that error. A Hooks value is an Option.
type Hooks struct {
	BeforeModel func(ctx context.Context, e ModelEvent) error
	AfterModel  func(ctx context.Context, e ModelEvent) error
	BeforeTool  func(ctx context.Context, e ToolEvent) error
	AfterTool   func(ctx context.Context, e ToolEvent) error
	OnError     func(ctx context.Context, err error)
	OnComplete  func(ctx context.Context, r *Result)
}

// ModelEvent is a model request (before) or its reply (after).
type ModelEvent struct {
	RunID     string
	Iteration int
	// WithTools is false for the last request after the cap.
	WithTools bool
	// After the request: the reply text, the tool calls asked for, tokens.
	Text      string
	ToolCalls int
	Usage     Usage
	Duration  time.Duration
}

// ToolEvent is a tool call about to run (before) or finished (after).
type ToolEvent struct {
	RunID string
	Call  ToolCall
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
