package loop

import "time"

// This file holds what goes in and out of Step: the Effects a runtime
// carries out, and the Inputs that report how they went.

// EffectKind names what an Effect asks of the runtime.
type EffectKind string

// The kinds of effects.
const (
	// AskModel: send Request to the model; answer with Input.Reply, or
	// with Input.Stop when it failed for good.
	AskModel EffectKind = "ask_model"
	// AskApproval: ask whether Call may run; answer with Input.Approval.
	AskApproval EffectKind = "ask_approval"
	// RunCall: wait Wait, then make attempt Call.Attempts of Call; answer
	// with Input.Done. Every RunCall effect of one Step may run at once
	// with the calls already running: the loop only asks for calls that
	// may run together.
	RunCall EffectKind = "run_call"
	// CheckAnswer: check Answer, the final answer of a run started with
	// StartWithFormat, against the run's Format (and whatever else the
	// runtime holds answers to); answer with Input.Checked.
	CheckAnswer EffectKind = "check_answer"
	// Emit: pass Event on (to a stream, hooks, a log). Nothing answers it.
	Emit EffectKind = "emit"
	// Finish: the run is over with Result. Nothing answers it.
	Finish EffectKind = "finish"
)

// EventKind names what an Emit effect reports.
type EventKind string

// The events the loop emits.
const (
	EventIteration    EventKind = "iteration"     // a model request is about to be sent
	EventToolStarted  EventKind = "tool_started"  // Call is starting (approval or run)
	EventToolFinished EventKind = "tool_finished" // Call has its outcome
)

// Effect is one thing the loop asks its runtime to do. The fields that
// matter depend on Kind.
type Effect struct {
	Kind EffectKind `json:"kind"`
	// Request is the model request of AskModel. Its Messages are the
	// run's request buffer, which the next request reuses (request.go):
	// they stay as they are until the next Step of the State that asked
	// for it (Pending leaves them be). A runtime that keeps a request
	// longer keeps a copy; nobody changes them.
	Request *Request `json:"request,omitempty"`
	// Summary marks the AskModel that asks for the summary of a
	// compaction (see Config.CompactAfter): it is sent like any other, but
	// its text is not the run's answer and is not streamed as such.
	Summary bool `json:"summary,omitempty"`
	// Call is the call of AskApproval, RunCall and the tool events, a
	// copy the runtime may keep.
	Call Call `json:"call,omitzero"`
	// Wait is how long a RunCall waits before its attempt: a retry's
	// backoff, jitter included.
	Wait time.Duration `json:"wait,omitempty"`
	// Event and Iteration say what an Emit reports.
	Event     EventKind `json:"event,omitempty"`
	Iteration int       `json:"iteration,omitempty"`
	// Compaction says what an EventCompacted compaction did.
	Compaction *Compaction `json:"compaction,omitempty"`
	// Result is the result of Finish.
	Result *Result `json:"result,omitempty"`
	// Answer is the answer text of CheckAnswer.
	Answer string `json:"answer,omitempty"`
}

// Input is what a runtime tells Step: the answer to one effect, or that
// the run must stop. Exactly one of Reply, Approval, Done, Checked and
// Stop is set.
type Input struct {
	// Now is the time of the input, as the runtime's clock reads it: the
	// loop reads no clock, and times the calls with it.
	Now time.Time `json:"now"`
	// Reply answers AskModel.
	Reply *Response `json:"reply,omitempty"`
	// Approval answers AskApproval.
	Approval *Approval `json:"approval,omitempty"`
	// Done answers RunCall.
	Done *Done `json:"done,omitempty"`
	// Checked answers CheckAnswer.
	Checked *Checked `json:"checked,omitempty"`
	// Stop ends the run early: a model request failed for good, a hook
	// failed, the caller canceled. The effects already handed out must
	// still be answered (a RunCall that was never started with a Done of
	// failure NotRun); the run then finishes.
	Stop *Stop `json:"stop,omitempty"`
}

// Approval answers an AskApproval effect.
type Approval struct {
	CallID  string `json:"call_id"`
	Granted bool   `json:"granted"`
	// Reason says why a call was denied: "no approver configured",
	// "approver failed: …", or the approver's no. It goes in Call.Error;
	// the model reads the same fail-closed denial whatever it is.
	Reason string `json:"reason,omitempty"`
}

// Failure says how an attempt failed, which decides the call's outcome
// and whether it is tried again.
type Failure string

// The kinds of failure.
const (
	// ToolFailed: the tool returned an error. A read, or an idempotent
	// write, may be tried again.
	ToolFailed Failure = "tool"
	// BadArguments: the arguments did not fit the tool's parameters, so
	// the tool did not run. Never tried again: the model must fix them.
	BadArguments Failure = "arguments"
	// Cut: the tool started and was stopped before it returned (timeout,
	// cancellation, panic, a lost worker). A cut write or delete ends
	// OutcomeUnknown; a read may be tried again.
	Cut Failure = "cut"
	// NotRun: the runtime did not start the attempt (the run is stopping,
	// or the call could not be scheduled). The call is skipped.
	NotRun Failure = "not_run"
)

// Done answers a RunCall effect: how the attempt ended.
type Done struct {
	CallID string `json:"call_id"`
	// Output is the tool's text, when it succeeded.
	Output string `json:"output,omitempty"`
	// Failure is set when the attempt failed, and Error then says why (a
	// Cut's Error is the reason it was cut, such as "it timed out after
	// 30s").
	Failure Failure `json:"failure,omitempty"`
	Error   string  `json:"error,omitempty"`
	// Images are the images the tool returned, when it succeeded: the
	// model is shown them after Output (see ImageNote). Images over the
	// bounds of CheckImages fail the call.
	Images []Image `json:"images,omitempty"`
}

// Stop ends a run early.
type Stop struct {
	// Reason is the run's StopReason: StopCanceled or StopFailed.
	Reason StopReason `json:"reason"`
	// Error says why, for the Result.
	Error string `json:"error,omitempty"`
}
