package loop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file is the step machine: Start begins a run, Step takes the answer
// to one effect and returns the next effects, Pending says what a run
// still waits for.

// Tool is what the loop knows of one tool: how the model is told of it,
// and how its calls are scheduled.
type Tool struct {
	Def    ToolDef
	Intent Intent // empty means Write
	// Idempotent marks a write that may run again for the same call.
	Idempotent bool
	// Approval says calls may need approval: each is preceded by an
	// AskApproval effect, whose runtime decides (a predicate may wave a
	// call through).
	Approval bool
}

// Config is what the loop knows of an agent. Zero values take the
// defaults named below.
type Config struct {
	Model string
	// SystemPrompt is the agent's instructions; the loop adds SafetyNote.
	SystemPrompt string
	Temperature  *float32
	Tools        []Tool
	// MaxIterations caps the rounds of tool calls (default 10); then the
	// model is asked once more, without tools, for an answer.
	MaxIterations int
	// MaxParallel bounds the calls of one response in flight at once
	// (default 8). Only reads are ever in flight together.
	MaxParallel int
	// ToolRetries is how many times a failed read, or a failed idempotent
	// write, is tried again (default 0).
	ToolRetries int
	// MaxOutput caps the bytes of every text the model reads about a call
	// (default 64 KiB).
	MaxOutput int
	// BackoffMin and BackoffMax bound the exponential backoff between
	// attempts of a call; zero means no wait.
	BackoffMin, BackoffMax time.Duration
	// CompactAfter compacts the conversation when a request would be
	// estimated past this many tokens (see EstimateTokens); 0 never does.
	// CompactStrategy says how (default CompactSummarize).
	CompactAfter    int
	CompactStrategy CompactStrategy
	// TokenBudget bounds the tokens of a run's model requests, as the
	// endpoint reports them (0: no bound). Each request ends with a line
	// saying how much is left, and the final answer is asked for without
	// tools once another round would not fit (see budget.go's rule).
	TokenBudget int
}

// Loop is the agent's loop as a deterministic state machine. It reads no
// clock, draws no random number, starts no goroutine and does no I/O: the
// same State and the same Input always give the same effects. A Loop is
// immutable and serves any number of runs at once, each with its own
// State.
type Loop struct {
	cfg    Config
	system string
	defs   []ToolDef
	byName map[string]int // tool name → index in cfg.Tools
	names  string         // the tools' names, for the unknown-tool message
	// buffers holds the request buffer of each State (request.go), by a
	// weak pointer to it.
	buffers sync.Map
}

// New checks cfg and makes a Loop of it.
func New(cfg Config) (*Loop, error) {
	if cfg.MaxIterations == 0 {
		cfg.MaxIterations = 10
	}
	if cfg.MaxParallel == 0 {
		cfg.MaxParallel = 8
	}
	if cfg.MaxOutput == 0 {
		cfg.MaxOutput = 64 << 10
	}
	switch {
	case cfg.TokenBudget < 0:
		return nil, fmt.Errorf("loop: TokenBudget %d must not be negative", cfg.TokenBudget)
	case cfg.MaxIterations < 1, cfg.MaxParallel < 1, cfg.MaxOutput < 1, cfg.ToolRetries < 0:
		return nil, fmt.Errorf("loop: MaxIterations %d, MaxParallel %d and MaxOutput %d must be at least 1, ToolRetries %d not negative",
			cfg.MaxIterations, cfg.MaxParallel, cfg.MaxOutput, cfg.ToolRetries)
	case cfg.BackoffMin < 0 || cfg.BackoffMax < cfg.BackoffMin:
		return nil, fmt.Errorf("loop: backoff %v to %v: need 0 <= min <= max", cfg.BackoffMin, cfg.BackoffMax)
	}
	if err := checkCompaction(&cfg); err != nil {
		return nil, err
	}
	cfg.Tools = append([]Tool(nil), cfg.Tools...)
	l := &Loop{cfg: cfg, byName: make(map[string]int, len(cfg.Tools))}
	l.system = SafetyNote
	if cfg.SystemPrompt != "" {
		l.system = cfg.SystemPrompt + "\n\n" + SafetyNote
	}
	names := make([]string, len(cfg.Tools))
	for i, t := range cfg.Tools {
		if _, dup := l.byName[t.Def.Name]; dup {
			return nil, fmt.Errorf("loop: two tools are named %q", t.Def.Name)
		}
		if t.Intent == "" {
			l.cfg.Tools[i].Intent = Write
		}
		l.byName[t.Def.Name] = i
		l.defs = append(l.defs, t.Def)
		names[i] = t.Def.Name
	}
	l.names = strings.Join(names, ", ")
	return l, nil
}

// Config returns the loop's configuration, defaults filled in.
func (l *Loop) Config() Config { return l.cfg }

// Start begins a run of prompt after history. runID names the run (in
// Result and in the IDs the loop gives calls that came without); seed
// draws the jitter of retries. The effects ask for the first model
// request.
func (l *Loop) Start(runID string, seed uint64, history []Message, prompt string) (*State, []Effect) {
	st := l.state(runID, seed, history, Message{Content: prompt})
	return st, l.ask(st, nil)
}

// state is the State of a run of prompt (its text and images) after a
// copy of history, before its first request.
func (l *Loop) state(runID string, seed uint64, history []Message, prompt Message) *State {
	msgs := make([]Message, len(history), len(history)+4)
	copy(msgs, history)
	msgs = append(msgs, Message{Role: RoleUser, Content: prompt.Content, Images: prompt.Images})
	return &State{RunID: runID, Seed: seed, Messages: msgs, Start: len(history), Result: Result{RunID: runID}}
}

// ErrUnexpected reports an Input that does not answer an effect the run
// waits for.
var ErrUnexpected = errors.New("loop: unexpected input")

// Step gives the run st the input in and returns what to do next. It
// changes st. An input the run does not wait for changes nothing and
// returns an error wrapping ErrUnexpected.
func (l *Loop) Step(st *State, in Input) ([]Effect, error) {
	set := 0
	for _, p := range []bool{in.Reply != nil, in.Approval != nil, in.Done != nil, in.Stop != nil, in.Checked != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("%w: %d of Reply, Approval, Done, Stop and Checked are set, want one", ErrUnexpected, set)
	}
	switch {
	case st.Phase == Finished:
		return nil, fmt.Errorf("%w: the run is over", ErrUnexpected)
	case in.Stop != nil:
		return l.stop(st, *in.Stop, in.Now), nil
	case in.Reply != nil:
		switch st.Phase {
		case AwaitingModel:
			return l.reply(st, in.Reply, in.Now), nil
		case AwaitingSummary:
			return l.summarized(st, in.Reply), nil
		}
		return nil, fmt.Errorf("%w: a reply, but no model request is pending", ErrUnexpected)
	case in.Checked != nil:
		if st.Phase != AwaitingCheck {
			return nil, fmt.Errorf("%w: an answer checked, but no check is pending", ErrUnexpected)
		}
		return l.checked(st, *in.Checked), nil
	case in.Approval != nil:
		c := st.call(in.Approval.CallID)
		if c == nil || c.Status != Approving {
			return nil, fmt.Errorf("%w: an approval of call %q, which waits for none", ErrUnexpected, in.Approval.CallID)
		}
		return l.approval(st, c, *in.Approval, in.Now), nil
	default:
		c := st.call(in.Done.CallID)
		if c == nil || c.Status != Running {
			return nil, fmt.Errorf("%w: call %q done, but it is not running", ErrUnexpected, in.Done.CallID)
		}
		return l.done(st, c, *in.Done, in.Now), nil
	}
}

// Pending returns the effects st still waits for answers to: the model
// request, or the approvals and calls in flight. A runtime resuming a
// decoded State carries these out again.
func (l *Loop) Pending(st *State) []Effect {
	var out []Effect
	switch st.Phase {
	case AwaitingModel:
		out = append(out, Effect{Kind: AskModel, Request: l.request(st)})
	case AwaitingSummary:
		out = append(out, Effect{Kind: AskModel, Summary: true, Request: l.summaryRequest(st)})
	case AwaitingCheck:
		out = append(out, Effect{Kind: CheckAnswer, Answer: st.Result.Output})
	case AwaitingCalls:
		for _, c := range st.Calls {
			switch {
			case c.Outcome != "":
			case c.Status == Approving:
				out = append(out, Effect{Kind: AskApproval, Call: c})
			case c.Status == Running:
				out = append(out, Effect{Kind: RunCall, Call: c})
			}
		}
	}
	return out
}

// seen reports whether one of calls has the ID id.
func seen(calls []Call, id string) bool {
	for i := range calls {
		if calls[i].ID == id {
			return true
		}
	}
	return false
}

func (st *State) call(id string) *Call {
	for i := range st.Calls {
		if st.Calls[i].ID == id && st.Calls[i].Outcome == "" {
			return &st.Calls[i]
		}
	}
	return nil
}

func (l *Loop) withTools(st *State) bool {
	return st.Iteration <= l.cfg.MaxIterations && len(l.cfg.Tools) > 0 && !st.OverBudget
}

// ask sends the next model request, compacted first when it is over
// Config.CompactAfter.
func (l *Loop) ask(st *State, out []Effect) []Effect {
	if !l.budget(st) {
		if st.Phase != AwaitingCheck { // the answer under correction stays the output
			st.Result.Output = l.budgetAnswer(st)
		}
		return l.finish(st, StopBudget, "", out)
	}
	st.Iteration++
	out, waiting := l.compact(st, out)
	if waiting {
		return out // for the summary; then send
	}
	return l.send(st, out)
}

// send sends the request of the conversation as it is.
func (l *Loop) send(st *State, out []Effect) []Effect {
	st.Phase = AwaitingModel
	out = append(out,
		Effect{Kind: Emit, Event: EventIteration, Iteration: st.Iteration},
		Effect{Kind: AskModel, Request: l.request(st)})
	return out
}

func (l *Loop) reply(st *State, r *Response, now time.Time) []Effect {
	l.counted(st, r)
	u := r.Usage
	u.Requests = 1
	st.Result.Usage.Add(u)
	if l.cfg.TokenBudget > 0 {
		st.LastUsage = u
	}
	msg := r.Message
	msg.Role = RoleAssistant
	if msg.ResponseID == "" {
		msg.ResponseID = r.ID
	}
	withTools := l.withTools(st)
	if r.Refused() || !withTools || len(msg.ToolCalls) == 0 {
		// A refused reply's calls are not run either.
		msg.ToolCalls = nil
		st.Messages = append(st.Messages, msg)
		st.Result.Output = msg.Content
		reason := StopNatural
		switch {
		case r.Refused():
			return l.finish(st, StopRefused, "the provider stopped the reply for safety or policy (finish reason "+short(r.FinishReason)+")", nil)
		case r.Cut():
			reason = StopLength
		case st.OverBudget:
			reason = StopBudget
		case !withTools && len(l.cfg.Tools) > 0:
			reason = StopMaxIterations
		}
		if (reason == StopBudget || reason == StopMaxIterations) && st.Result.Output == "" {
			st.Result.Output = l.fallbackAnswer(st, reason)
		}
		if st.Answer != nil {
			return l.checkAnswer(st, reason)
		}
		return l.finish(st, reason, "", nil)
	}
	st.Result.Iterations = st.Iteration
	// The reply is the runtime's: IDs are given on a copy.
	msg.ToolCalls = append([]ToolRequest(nil), msg.ToolCalls...)
	st.Calls = make([]Call, len(msg.ToolCalls))
	// An event for each call, and a start for each that may start now.
	out := make([]Effect, 0, len(msg.ToolCalls)+min(len(msg.ToolCalls), l.cfg.MaxParallel)+2)
	for i := range msg.ToolCalls {
		tc := &msg.ToolCalls[i]
		if !usableID(tc.ID) || seen(st.Calls[:i], tc.ID) {
			// Some servers send no ID, or one ID twice, and a model's text
			// is no ID without bounds; each tool message must answer its
			// own.
			tc.ID = "call_" + st.RunID + "_" + strconv.Itoa(st.Iteration) + "_" + strconv.Itoa(i)
		}
		c := &st.Calls[i]
		*c = Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Iteration: st.Iteration}
		t, ok := l.byName[tc.Name]
		if ok {
			c.Intent = l.cfg.Tools[t].Intent
		}
		switch {
		case r.Cut():
			c.Outcome, c.Output = Skipped, Cap(cutReplyText, l.cfg.MaxOutput)
			out = append(out, Effect{Kind: Emit, Event: EventToolFinished, Call: *c})
		case !ok:
			c.Outcome, c.Error = Failed, "unknown tool"
			c.Output = Cap(unknownToolText(tc.Name, l.names), l.cfg.MaxOutput)
			out = append(out, Effect{Kind: Emit, Event: EventToolFinished, Call: *c})
		}
	}
	st.Messages = append(st.Messages, msg)
	st.Phase = AwaitingCalls
	return l.advance(st, now, out)
}

// advance starts what may start now and, once every call of the response
// has ended, moves on.
func (l *Loop) advance(st *State, now time.Time, out []Effect) []Effect {
	out = l.schedule(st, now, out)
	for _, c := range st.Calls {
		if c.Outcome == "" {
			return out
		}
	}
	for i, c := range st.Calls {
		st.Messages = append(st.Messages, Message{Role: RoleTool, ToolCallID: c.ID, Name: c.Name, Content: c.Output, Images: c.Images,
			ToolError: c.Outcome == Failed || c.Outcome == OutcomeUnknown})
		st.Calls[i].Images = nil // the message holds them
	}
	st.Result.Calls = append(st.Result.Calls, st.Calls...)
	st.Calls = nil
	if st.Stopping != nil {
		return l.finish(st, st.Stopping.Reason, st.Stopping.Error, out)
	}
	return l.ask(st, out)
}

// schedule applies the order rule. Calls run in the model's order, except
// that consecutive reads run together, at most MaxParallel at once: a read
// waits for every write listed before it, a write for every call listed
// before it. Once a write has failed, been denied or ended with an
// unknown outcome, the later writes of the response are skipped.
func (l *Loop) schedule(st *State, now time.Time, out []Effect) []Effect {
	inflight := 0
	for _, c := range st.Calls {
		if c.Outcome == "" && c.Status != Waiting {
			inflight++
		}
	}
	var broken *Call // the first write that did not succeed
	for i := range st.Calls {
		c := &st.Calls[i]
		write := c.Intent != Read && c.Intent != ""
		if c.Outcome != "" {
			if write && c.Outcome != Succeeded && broken == nil {
				broken = c
			}
			continue
		}
		if c.Status != Waiting {
			if write {
				return out
			}
			continue
		}
		switch {
		case st.Stopping != nil:
			out = l.end(st, c, Skipped, stoppedText, st.Stopping.why(), now, out)
		case write && broken != nil:
			out = l.end(st, c, Skipped, Cap(skippedAfterText(broken), l.cfg.MaxOutput), "", now, out)
		case write:
			if inflight > 0 {
				return out
			}
			return l.begin(st, c, now, out)
		case inflight >= l.cfg.MaxParallel:
			return out // reads start in the model's order
		default:
			out = l.begin(st, c, now, out)
			inflight++
		}
	}
	return out
}

// begin starts c: approval first when its tool may need it.
func (l *Loop) begin(st *State, c *Call, now time.Time, out []Effect) []Effect {
	c.Started = now
	if l.cfg.Tools[l.byName[c.Name]].Approval {
		c.Status = Approving
		return append(out, Effect{Kind: Emit, Event: EventToolStarted, Call: *c}, Effect{Kind: AskApproval, Call: *c})
	}
	c.Status = Running
	c.Attempts = 1
	return append(out, Effect{Kind: Emit, Event: EventToolStarted, Call: *c}, Effect{Kind: RunCall, Call: *c})
}

func (l *Loop) approval(st *State, c *Call, a Approval, now time.Time) []Effect {
	var out []Effect
	c.ApprovalWait = durationSince(c.Started, now)
	switch {
	case st.Stopping != nil:
		out = l.end(st, c, Skipped, stoppedText, st.Stopping.why(), now, out)
	case !a.Granted:
		reason := a.Reason
		if reason == "" {
			reason = "denied"
		}
		out = l.end(st, c, Denied, DeniedText, reason, now, out)
	default:
		c.Status = Running
		c.Attempts = 1
		out = append(out, Effect{Kind: RunCall, Call: *c})
	}
	return l.advance(st, now, out)
}

func (l *Loop) done(st *State, c *Call, d Done, now time.Time) []Effect {
	t := l.cfg.Tools[l.byName[c.Name]]
	if d.Failure == NotRun && c.Attempts > 1 {
		// A retry that never started: the last attempt's failure stands.
		d = Done{CallID: d.CallID, Failure: ToolFailed, Error: c.Error}
	}
	again := (d.Failure == ToolFailed || d.Failure == Cut) &&
		(t.Intent == Read || t.Idempotent) && c.Attempts <= l.cfg.ToolRetries && st.Stopping == nil
	if again {
		c.Error = d.Error
		wait := backoff(l.cfg.BackoffMin, l.cfg.BackoffMax, c.Attempts-1, st.Seed, c.ID)
		c.Attempts++
		return []Effect{{Kind: RunCall, Call: *c, Wait: wait}}
	}
	c.End(d, l.cfg.MaxOutput)
	if d.Failure == NotRun && c.Error == "" && st.Stopping != nil {
		c.Error = st.Stopping.why()
	}
	c.Duration = durationSince(c.Started, now)
	out := []Effect{{Kind: Emit, Event: EventToolFinished, Call: *c}}
	return l.advance(st, now, out)
}

// end gives c its outcome and reports it.
func (l *Loop) end(st *State, c *Call, o Outcome, output, err string, now time.Time, out []Effect) []Effect {
	c.Status, c.Outcome, c.Output, c.Error = Waiting, o, output, err
	c.Duration = durationSince(c.Started, now)
	return append(out, Effect{Kind: Emit, Event: EventToolFinished, Call: *c})
}

func durationSince(start, now time.Time) time.Duration {
	if start.IsZero() || now.Before(start) {
		return 0
	}
	return now.Sub(start)
}

// End gives c the outcome its last attempt d decides, in the words the
// model reads, each text cut to maxOutput bytes (no cap when 0). It is the
// rule every runtime uses, with or without a Loop. A success with images
// keeps them, its text led by their ImageNote; one whose images break the
// bounds of CheckImages fails, naming the tool.
func (c *Call) End(d Done, maxOutput int) {
	c.Status = Waiting
	c.Error = d.Error
	c.Images = nil
	switch d.Failure {
	case "":
		if err := CheckImages(d.Images); err != nil {
			c.Outcome, c.Error = Failed, "the tool "+strconv.Quote(short(c.Name))+" returned images the model cannot be shown: "+err.Error()
			c.Output = Cap(failureText(c.Error), maxOutput)
			return
		}
		c.Outcome, c.Output, c.Error = Succeeded, Cap(d.Output, maxOutput), ""
		if len(d.Images) > 0 {
			note := ImageNote(d.Images)
			if d.Output != "" {
				note += "\n"
			}
			c.Output, c.Images = Cap(note+d.Output, maxOutput), d.Images
		}
	case NotRun:
		c.Outcome, c.Output = Skipped, stoppedText
	case Cut:
		c.Error = cutText(d.Error)
		if c.Intent != Read {
			c.Outcome, c.Output = OutcomeUnknown, Cap(unknownOutcomeText(c.Intent, d.Error), maxOutput)
			return
		}
		c.Outcome, c.Output = Failed, Cap(failureText(c.Error), maxOutput)
	default:
		c.Outcome, c.Output = Failed, Cap(failureText(d.Error), maxOutput)
	}
}

// Deny gives c the outcome Denied, for reason.
func (c *Call) Deny(reason string) {
	c.Status, c.Outcome, c.Output, c.Error = Waiting, Denied, DeniedText, reason
}

// why is the error of a call skipped because the run stopped.
func (s *Stop) why() string {
	if s.Error == "" {
		return "the run stopped (" + string(s.Reason) + ")"
	}
	return "the run stopped: " + s.Error
}

func (l *Loop) stop(st *State, s Stop, now time.Time) []Effect {
	if st.Stopping != nil {
		return nil
	}
	if st.Phase == AwaitingModel || st.Phase == AwaitingSummary || st.Phase == AwaitingCheck {
		return l.finish(st, s.Reason, s.Error, nil)
	}
	st.Stopping = &s
	return l.advance(st, now, nil)
}

func (l *Loop) finish(st *State, reason StopReason, err string, out []Effect) []Effect {
	st.Phase = Finished
	st.Result.StopReason = reason
	st.Result.Error = err
	r := st.Result
	return append(out, Effect{Kind: Finish, Result: &r})
}

// fallbackAnswer is the answer when the model says nothing after the cap
// or the budget.
func (l *Loop) fallbackAnswer(st *State, reason StopReason) string {
	msg := fmt.Sprintf("I could not finish within %d rounds of tool calls, and the model gave no final answer.", l.cfg.MaxIterations)
	if reason == StopBudget {
		msg = fmt.Sprintf("I could not finish within the token budget of %d tokens, and the model gave no final answer.", l.cfg.TokenBudget)
	}
	return msg + failedCalls(st)
}

// failedCalls lists the calls of the run that did not succeed, for a
// fallback answer.
func failedCalls(st *State) string {
	var failed []string
	for _, c := range st.Result.Calls {
		if c.Outcome != Succeeded {
			failed = append(failed, short(c.Name)+" ("+string(c.Outcome)+")")
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return " Calls that did not succeed: " + strings.Join(failed, ", ") + "."
}
