package loop

import (
	"time"
)

// This file holds what the loop remembers: the State of one run, the
// calls of the current response, and the Result the run ends with. All of
// it is plain data that encodes to JSON and back unchanged.

// Intent says what a tool does to the world: reads run together and may be
// retried; writes and deletes run one at a time, in the model's order.
type Intent string

// The intents of a tool.
const (
	Read   Intent = "read"
	Write  Intent = "write"
	Delete Intent = "delete"
)

// Outcome is how one tool call ended.
type Outcome string

// The outcomes of a tool call.
const (
	// Succeeded: the tool returned a result.
	Succeeded Outcome = "succeeded"
	// Failed: the tool returned an error, its arguments did not fit, the
	// model named no such tool, or a read was cut off.
	Failed Outcome = "failed"
	// Denied: the call needed approval and did not get it; it did not run.
	Denied Outcome = "denied"
	// Skipped: the call did not run, because an earlier write of the same
	// response did not succeed, because the run stopped first, or because
	// the reply that asked for it was cut by the output token limit (its
	// arguments may be cut too).
	Skipped Outcome = "skipped"
	// OutcomeUnknown: a write or delete started and was cut (timeout,
	// cancellation, panic, a lost worker), so nobody knows whether it took
	// effect.
	OutcomeUnknown Outcome = "outcome_unknown"
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
	// StopFailed: the run ended with an error, such as a model endpoint
	// that kept failing or a hook's error.
	StopFailed StopReason = "failed"
	// StopBudget: another round of tool calls would not have fit the
	// token budget, and the model answered, without tools, from what it
	// had gathered (or the budget left no room even for that).
	StopBudget StopReason = "budget"
	// StopLength: the model's last reply was cut by its output token
	// limit or by the end of its context window (see Response.Cut), so
	// Output is the cut text, not a whole answer. Raise the model's output
	// limit or ask for less; for a full context window, compact.
	StopLength StopReason = "length"
	// StopRefused: the provider stopped the model's last reply for safety
	// or policy (see Response.Refused); Error names its finish reason,
	// and Output holds what text came, which is no answer. The reply's
	// tool calls were not run.
	StopRefused StopReason = "refused"
)

// Answered reports whether a run that ended for s ended with an answer a
// caller may read: StopNatural, StopMaxIterations or StopBudget. An agent
// given as a tool hands its caller that answer; any other end fails the
// call.
func (s StopReason) Answered() bool {
	return s == StopNatural || s == StopMaxIterations || s == StopBudget
}

// AddSubRun adds to by, a run's breakdown of the usage of the runs it
// handed tasks to (Result.ByAgent), a sub-run of the agent at path (such
// as "lead/reader"): its own breakdown subBy when it handed tasks on in
// turn, else its usage. It returns by, made when nil.
func AddSubRun(by map[string]Usage, path string, usage Usage, subBy map[string]Usage) map[string]Usage {
	if by == nil {
		by = map[string]Usage{}
	}
	if len(subBy) == 0 {
		subBy = map[string]Usage{path: usage}
	}
	for p, u := range subBy {
		v := by[p]
		v.Add(u)
		by[p] = v
	}
	return by
}

// WithSubRuns is a run's usage once it ends: own, its own requests', with
// every sub-run's in by added, and the breakdown, a copy of by with own
// under path. With no sub-runs it is own and nil.
func WithSubRuns(own Usage, by map[string]Usage, path string) (Usage, map[string]Usage) {
	if len(by) == 0 {
		return own, nil
	}
	total := own
	out := make(map[string]Usage, len(by)+1)
	for p, u := range by {
		total.Add(u)
		out[p] = u
	}
	out[path] = own
	return total, out
}

// CallStatus is where a call of the current response stands.
type CallStatus string

// The statuses of a call. A call with an Outcome is over.
const (
	Waiting   CallStatus = ""          // not started
	Approving CallStatus = "approving" // an AskApproval effect awaits its answer
	Running   CallStatus = "running"   // a RunCall effect awaits its answer
)

// Call is one tool call of a run: while it goes, and, once it has an
// Outcome, as the run's Result records it.
type Call struct {
	// ID is the model's ID of the call, or one the loop gave it.
	ID string `json:"id"`
	// Name is the tool's name, as the model sent it.
	Name string `json:"name"`
	// Intent is the tool's intent, empty for a tool that does not exist.
	Intent Intent `json:"intent,omitempty"`
	// Arguments are the raw arguments, as the model sent them.
	Arguments string `json:"arguments"`
	// Iteration is the round of tool calls, from 1.
	Iteration int `json:"iteration"`
	// Status says where a call that has no Outcome yet stands.
	Status CallStatus `json:"status,omitempty"`
	// Attempts counts the attempts started: in a RunCall effect, the
	// number of the attempt to make.
	Attempts int `json:"attempts"`
	// Started is when the call began (asked for approval or ran), as the
	// input that started it said.
	Started time.Time `json:"started,omitzero"`
	// Outcome is how the call ended; empty while it goes.
	Outcome Outcome `json:"outcome,omitempty"`
	// Output is the text the model reads for the call.
	Output string `json:"output,omitempty"`
	// Error says why a call did not succeed.
	Error string `json:"error,omitempty"`
	// Images are the images the tool returned, which its tool message
	// carries; Result.Calls leaves them out, to keep one copy.
	Images []Image `json:"images,omitempty"`
	// Duration is from Started to the outcome, approval included.
	Duration time.Duration `json:"duration,omitempty"`
	// ApprovalWait is the part of Duration spent waiting for approval;
	// Duration minus ApprovalWait is how long the tool took.
	ApprovalWait time.Duration `json:"approval_wait,omitempty"`
}

// Result is the answer of a run and what happened on the way.
type Result struct {
	RunID      string     `json:"run_id"`
	Output     string     `json:"output"`
	Iterations int        `json:"iterations"` // rounds of tool calls
	StopReason StopReason `json:"stop_reason,omitempty"`
	// Error is why a run that stopped early stopped.
	Error string `json:"error,omitempty"`
	// Calls are every call of the run, in the model's order within a
	// round.
	Calls []Call `json:"calls,omitempty"`
	Usage Usage  `json:"usage"`
	// Compactions are the run's compactions, in order.
	Compactions []Compaction `json:"compactions,omitempty"`
	// AnswerProblems are, in a run started with a Format, what is wrong
	// with the final answer that ended it: set when the answer after the
	// corrective turn did not fit either, or when the budget left no room
	// for the corrective turn.
	AnswerProblems []string `json:"answer_problems,omitempty"`
	// ByAgent is set by a runtime whose run handed tasks to other agents:
	// the usage of those runs by path of agents ("lead/reader"), which
	// the runtime adds to Usage when the run ends, with this run's own
	// under its agent's path. The loop keeps it and never reads it.
	ByAgent map[string]Usage `json:"by_agent,omitempty"`
}

// Phase is what a run waits for.
type Phase string

// The phases of a run.
const (
	AwaitingModel Phase = "model" // the answer to an AskModel effect
	AwaitingCalls Phase = "calls" // the answers about the current calls
	AwaitingCheck Phase = "check" // the answer to a CheckAnswer effect
	Finished      Phase = "done"  // nothing: the run is over
)

// State is one run of the loop. Start makes it and Step moves it on; a
// runtime may encode it to JSON at any point and continue from the
// decoded copy with the same Loop.
type State struct {
	RunID string `json:"run_id"`
	// Seed draws the jitter of retry backoffs, so that the same State and
	// the same inputs always give the same effects.
	Seed uint64 `json:"seed"`
	// Messages are the conversation: the history, the prompt, and the
	// run's messages so far. The system message is not among them: each
	// Request begins with it. The loop only appends to Messages or
	// replaces the slice (a compaction), never changing a message in
	// place, so Messages may share its array with the history a run began
	// with (StartAfter); a runtime must not change them either.
	Messages []Message `json:"messages"`
	// Start is the index in Messages of the run's prompt; the messages
	// before it are the history the run began with.
	Start int `json:"start"`
	// Iteration counts the model requests sent, from 1.
	Iteration int `json:"iteration"`
	// Phase is what the run waits for.
	Phase Phase `json:"phase"`
	// Calls are the calls of the current response, in the model's order.
	Calls []Call `json:"calls,omitempty"`
	// Stopping is set when the run was told to stop: calls not started are
	// skipped, and the run finishes once the started ones have ended.
	Stopping *Stop `json:"stopping,omitempty"`
	// Result is the run's result so far.
	Result Result `json:"result"`
	// Compact is what compaction remembers, in a run of a loop with
	// Config.CompactAfter.
	Compact *CompactState `json:"compact,omitempty"`
	// Answer is set in a run started with StartWithFormat.
	Answer *Answer `json:"answer,omitempty"`
	// LastUsage is the usage of the last reply, kept when the Config has
	// a TokenBudget: the next request is estimated from it.
	LastUsage Usage `json:"last_usage,omitzero"`
	// OverBudget is set once the token budget leaves no room for another
	// round of tool calls: the requests from then on offer no tools.
	OverBudget bool `json:"over_budget,omitempty"`
}
