package devui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/visible"
	"github.com/onionkit/onion/loop"
)

// This file is a run as the page sees it: the prompt, each model request
// and its reply, each tool call and the answer, kept within the UI's
// bounds and sent to the pages as they change.

// Bounds of what one run keeps for the page.
const (
	maxShown     = 64 << 10  // of one tool call's arguments, output or error
	maxReplyText = 256 << 10 // of one reply's text
	maxItems     = 2000      // model requests and tool calls
	notKept      = "(not kept: the run passed the UI's memory bound)"
)

// run is one prompt run through a conversation. Guarded by UI.mu.
type run struct {
	ID         string      `json:"id"`
	Conv       string      `json:"conv"`
	Agent      string      `json:"agent"`
	Prompt     string      `json:"prompt"`
	Status     string      `json:"status"` // running, done, failed, stopped
	Started    time.Time   `json:"started"`
	Ended      *time.Time  `json:"ended,omitempty"`
	Output     string      `json:"output"`
	Error      string      `json:"error,omitempty"`
	StopReason string      `json:"stop_reason,omitempty"`
	Usage      onion.Usage `json:"usage"`
	Cost       *float64    `json:"cost,omitempty"`
	Dropped    int         `json:"dropped,omitempty"` // items not kept

	cancel  context.CancelFunc
	stopped bool         // the page asked it to stop
	items   []any        // *modelStep and *toolItem, in the order they came
	steps   []*modelStep // its model requests
	tools   map[string]*toolItem
	top     *modelStep // the reply of the run's own agent that streams
	bytes   int        // kept for the page, JSON included
}

// runView is a run as an event carries it: Items only in a snapshot.
type runView struct {
	*run
	Items []any `json:"items,omitempty"`
}

// modelStep is one model request and its reply.
type modelStep struct {
	Index        int         `json:"index"` // in the run's items
	Step         int         `json:"step"`  // 1, 2, … in the run
	Agent        string      `json:"agent"` // the path of agents that sent it ("lead/reader")
	Depth        int         `json:"depth"` // 1 for the run's own agent
	Model        string      `json:"model"`
	Status       string      `json:"status"` // waiting, done, failed
	Started      time.Time   `json:"started"`
	LatencyMS    float64     `json:"latency_ms"`
	Usage        onion.Usage `json:"usage"`
	FinishReason string      `json:"finish_reason,omitempty"`
	Error        string      `json:"error,omitempty"`
	Retries      int         `json:"retries,omitempty"`
	Text         string      `json:"text"`
	ToolCalls    int         `json:"tool_calls"`
	JSON         string      `json:"json"` // kept, dropped
	Wire         bool        `json:"wire"` // the bytes on the wire were kept (Transport)
	Kind         string      `json:"kind"` // "model"

	request, reply         []byte // the JSON, scrubbed; nil once dropped
	wireRequest, wireReply []byte // the bodies on the wire, scrubbed (Transport)
	scrub                  streamScrub
	ended                  bool
}

// toolItem is one tool call.
type toolItem struct {
	Index          int      `json:"index"`
	Kind           string   `json:"kind"` // "tool"
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Intent         string   `json:"intent"`
	Agents         []string `json:"agents,omitempty"`
	Iteration      int      `json:"iteration"`
	Arguments      string   `json:"arguments"`
	Status         string   `json:"status"`   // running, done
	Approval       string   `json:"approval"` // "", waiting, approved, denied, auto
	Attempts       int      `json:"attempts"`
	Outcome        string   `json:"outcome,omitempty"`
	DurationMS     float64  `json:"duration_ms"`
	ApprovalWaitMS float64  `json:"approval_wait_ms,omitempty"`
	Output         string   `json:"output"`
	Error          string   `json:"error,omitempty"`
}

// itemEvent is a model step or tool call with its run, as an event
// carries it.
type itemEvent struct {
	Run  string `json:"run"`
	Item any    `json:"item"`
}

// toolKey names a call in its run: sub-agents number their calls apart.
func toolKey(agents []string, id string) string {
	return strings.Join(agents, "/") + "\x00" + id
}

// keep is s as the run keeps it: cut at limit bytes, and counted against
// the run's bound. u.mu is held.
func (u *UI) keep(r *run, s string, limit int) string {
	s = u.scrub.text(loop.Cap(s, limit))
	if !u.room(r, len(s)) {
		return notKept
	}
	r.bytes += len(s)
	return s
}

// room reports whether the run may keep n more bytes, dropping the JSON
// of its oldest requests to make room. u.mu is held.
func (u *UI) room(r *run, n int) bool {
	for _, st := range r.steps {
		if r.bytes+n <= u.set.limits.RunBytes {
			break
		}
		if st.request != nil || st.reply != nil || st.wireRequest != nil || st.wireReply != nil {
			r.bytes -= len(st.request) + len(st.reply) + len(st.wireRequest) + len(st.wireReply)
			st.request, st.reply, st.JSON = nil, nil, "dropped"
			st.wireRequest, st.wireReply, st.Wire = nil, nil, false
			u.publish("model", itemEvent{r.ID, st})
		}
	}
	return r.bytes+n <= u.set.limits.RunBytes
}

// addItem appends it to the run's items, or counts it dropped past
// maxItems. u.mu is held.
func (r *run) addItem(it any) (index int, ok bool) {
	if len(r.items) >= maxItems {
		r.Dropped++
		return 0, false
	}
	r.items = append(r.items, it)
	return len(r.items) - 1, true
}

// text streams the next piece of the reply of the run's own agent. u.mu
// is held.
func (u *UI) text(r *run, piece string) {
	st := r.top
	if st == nil || st.ended || len(st.Text) >= maxReplyText {
		return // the reply is over (its whole text went with it), or past its bound
	}
	out := st.scrub.add(piece, false)
	if out == "" || len(st.Text)+len(out) > maxReplyText || !u.room(r, len(out)) {
		return
	}
	st.Text += out
	r.bytes += len(out)
	u.publishText(r.ID, st.Step, out)
}

// tool records a tool call as a Stream event reports it. u.mu is held.
func (u *UI) tool(r *run, kind onion.EventKind, c *onion.ToolCall) {
	it := u.toolItem(r, c.Agents, c.ID)
	if it == nil {
		return
	}
	if it.Name == "" {
		it.Name = visible.String(c.Name)
		it.Intent = string(c.Intent)
		it.Iteration = c.Iteration
		it.Arguments = u.keep(r, visible.String(c.Arguments), maxShown)
	}
	if kind == onion.EventToolStarted {
		if it.Status == "" {
			it.Status = "running"
		}
	} else {
		it.Status = "done"
		it.Outcome = string(c.Outcome)
		it.Attempts = c.Attempts
		it.DurationMS = ms(c.Duration)
		it.ApprovalWaitMS = ms(c.ApprovalWait)
		it.Output = u.keep(r, c.Output, maxShown)
		it.Error = u.keep(r, c.Error, maxShown)
		if it.Approval == "waiting" {
			it.Approval = "denied" // the run stopped while it waited
		}
	}
	u.publish("tool", itemEvent{r.ID, it})
}

// toolItem returns the call id of the path of agents in r, made on first
// sight; nil when the run keeps no more items. u.mu is held.
func (u *UI) toolItem(r *run, agents []string, id string) *toolItem {
	key := toolKey(agents, id)
	if it, ok := r.tools[key]; ok {
		return it
	}
	it := &toolItem{Kind: "tool", ID: visible.String(id), Agents: agents}
	i, ok := r.addItem(it)
	if !ok {
		return nil
	}
	it.Index = i
	r.tools[key] = it
	return it
}

// start runs prompt in the conversation cv, and returns the run.
func (u *UI) start(cv *conv, prompt string) (*run, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.closed:
		return nil, errClosed
	case cv.Busy != "":
		return nil, withStatus(http.StatusConflict, fmt.Errorf("devui: the conversation is answering a prompt already (run %s): wait for it, or stop it", cv.Busy))
	}
	if err := u.makeRoom(); err != nil {
		return nil, err
	}
	a := u.agents[cv.Agent]
	r := &run{ID: u.newID("r"), Conv: cv.ID, Agent: a.name, Status: "running", Started: time.Now(), tools: map[string]*toolItem{}}
	r.Prompt = u.keep(r, prompt, maxShown)
	ctx, cancel := context.WithCancel(u.ctx)
	r.cancel = cancel
	u.runs = append(u.runs, r)
	cv.Runs = append(cv.Runs, r.ID)
	cv.Busy = r.ID
	u.publish("run", runView{run: r})
	u.publish("conv", cv.brief())
	u.wg.Add(1)
	go u.drive(ctx, r, cv, prompt)
	return r, nil
}

// makeRoom drops the oldest finished run when the UI keeps as many as
// it may. u.mu is held.
func (u *UI) makeRoom() error {
	if len(u.runs) < u.set.limits.Runs {
		return nil
	}
	for i, r := range u.runs {
		if r.Status == "running" {
			continue
		}
		u.runs = append(u.runs[:i], u.runs[i+1:]...)
		for _, cv := range u.convs {
			if cv.ID == r.Conv {
				cv.dropRun(r.ID)
				u.publish("conv", cv.brief())
			}
		}
		u.publish("run_removed", r.ID)
		return nil
	}
	return withStatus(http.StatusTooManyRequests, fmt.Errorf("devui: %d runs are in flight, the most the UI keeps: wait for one, or stop one", len(u.runs)))
}

// scope is what the UI's instrument and approver find in the context of
// a run it started: the run, and the path of agents of the (sub-)run.
type scope struct {
	ui     *UI
	run    *run
	agents string
	depth  int // 1 for the run's own agent, 2 for an agent it called…
}

type scopeKey struct{}

// drive runs prompt through cv's conversation and records what happens.
func (u *UI) drive(ctx context.Context, r *run, cv *conv, prompt string) {
	defer u.wg.Done()
	defer r.cancel()
	ctx = context.WithValue(ctx, scopeKey{}, &scope{ui: u, run: r})
	var res *onion.Result
	var runErr error
	for ev, err := range cv.c.Stream(ctx, prompt) {
		u.mu.Lock()
		switch ev.Kind {
		case onion.EventTextDelta:
			u.text(r, ev.Text)
		case onion.EventToolStarted, onion.EventToolFinished:
			if ev.Call != nil {
				u.tool(r, ev.Kind, ev.Call)
			}
		case onion.EventDone:
			res = ev.Result
		}
		u.mu.Unlock()
		if err != nil {
			runErr = err
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	r.Ended = &now
	switch {
	case runErr == nil:
		r.Status = "done"
	case r.stopped || errors.Is(runErr, context.Canceled):
		r.Status = "stopped"
	default:
		r.Status = "failed"
	}
	if runErr != nil {
		r.Error = u.keep(r, runErr.Error(), maxShown)
	}
	if res != nil {
		r.Output = u.keep(r, res.Output, maxReplyText)
		r.StopReason = string(res.StopReason)
		r.Usage = res.Usage
	}
	r.Cost = u.cost(r.steps)
	cv.Busy = ""
	u.publish("run", runView{run: r})
	u.publish("conv", cv.brief())
}

// stop cancels the run id.
func (u *UI) stop(id string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.findRun(id)
	if r == nil {
		return fmt.Errorf("devui: no run %q", id)
	}
	if r.Status == "running" {
		r.stopped = true
		r.cancel()
	}
	return nil
}

// findRun returns the run id, or nil. u.mu is held.
func (u *UI) findRun(id string) *run {
	for _, r := range u.runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
