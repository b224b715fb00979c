package devui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
)

// This file shows the tools as the model sees them and calls one
// directly from the page's form, without a model, as Tool.Call does.

// maxCallOutput bounds what the page is sent of a direct call's output.
const maxCallOutput = 1 << 20

// agentView is an agent and its tools, as the page lists them.
type agentView struct {
	Name  string     `json:"name"`
	Tools []toolView `json:"tools"`
}

// toolView is a tool as the model is told of it.
type toolView struct {
	Name        string          `json:"name"`
	Intent      string          `json:"intent"`
	Approval    string          `json:"approval"` // required, none
	Description string          `json:"description"`
	Signature   string          `json:"signature,omitempty"`
	Schema      json.RawMessage `json:"schema"` // the parameters as sent
	Strict      bool            `json:"strict,omitempty"`
}

// agentViews lists the agents and their tools.
func (u *UI) agentViews() []agentView {
	out := make([]agentView, len(u.agents))
	for i, a := range u.agents {
		out[i] = agentView{Name: a.name, Tools: []toolView{}}
		tools := a.given.Tools()
		for _, d := range a.given.Definitions() {
			v := toolView{Name: d.Function.Name, Description: u.scrub.text(d.Function.Description), Strict: d.Function.Strict}
			if b, err := json.Marshal(d.Function.Parameters); err == nil {
				v.Schema = u.scrub.json(b)
			}
			if t, ok := tools.Get(d.Function.Name); ok {
				v.Intent, v.Signature, v.Approval = string(t.Intent()), t.Signature(), "none"
				if t.NeedsApproval(context.Background(), onion.Call{Name: t.Name(), Intent: t.Intent(), Arguments: json.RawMessage(`{}`)}) {
					v.Approval = "required"
				}
			}
			out[i].Tools = append(out[i].Tools, v)
		}
	}
	return out
}

// callResult is how a direct call ended.
type callResult struct {
	Outcome    string  `json:"outcome"`
	Output     string  `json:"output"` // what a model would read
	Error      string  `json:"error,omitempty"`
	Attempts   int     `json:"attempts"`
	DurationMS float64 `json:"duration_ms"`
}

// call runs the tool name of the agent i once with args, as the agent
// would (drive.RunCall: its timeout, a panic caught): a tool that needs
// approval runs only when approved is set, the page's user having said
// yes in the form.
func (u *UI) call(ctx context.Context, i int, name, args string, approved bool) (*callResult, error) {
	if i < 0 || i >= len(u.agents) {
		return nil, fmt.Errorf("devui: no agent %d: there are %d", i, len(u.agents))
	}
	a := u.agents[i]
	t, ok := a.given.Tools().Get(name)
	if !ok {
		return nil, fmt.Errorf("devui: agent %q has no tool %q", a.name, name)
	}
	select {
	case u.calls <- struct{}{}:
		defer func() { <-u.calls }()
	default:
		return nil, withStatus(http.StatusTooManyRequests, fmt.Errorf("devui: %d calls from the form are in flight, the most the UI runs at once: wait for one", cap(u.calls)))
	}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil, errClosed
	}
	u.wg.Add(1)
	u.nextID++
	id := fmt.Sprintf("call_page_%d", u.nextID)
	u.mu.Unlock()
	defer u.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(u.ctx, cancel)
	defer stop()

	cfg := drive.CallConfigOf(a.given)
	cfg.MaxOutput = maxCallOutput
	cfg.Approver = func(context.Context, onion.Call) (bool, error) { return approved, nil }
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	raw := json.RawMessage(args) // the tool gets the text as it is, JSON or not
	start := time.Now()
	tc := drive.RunCall(ctx, t, onion.Call{ID: id, Name: t.Name(), Intent: t.Intent(), Arguments: raw, RunID: "page", Attempt: 1, IdempotencyKey: "page:" + id}, cfg)
	res := &callResult{Outcome: string(tc.Outcome), Output: u.scrub.text(tc.Output), Error: u.scrub.text(tc.Error),
		Attempts: tc.Attempts, DurationMS: ms(time.Since(start))}
	if tc.Outcome == onion.Denied && !approved {
		res.Error = "the tool needs approval: tick \"approve this call\" to run it"
	}
	return res, nil
}
