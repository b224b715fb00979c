package devui

import (
	"context"
	"errors"
	"fmt"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/visible"
)

// This file makes the page the approver of the agents' runs: a call that
// needs approval shows on every page with its whole arguments, and waits
// for Approve or Deny, or for its run to end.

// approval is a call waiting for the page's answer.
type approval struct {
	ID     string   `json:"id"`
	Run    string   `json:"run"`
	CallID string   `json:"call_id"`
	Name   string   `json:"name"`
	Intent string   `json:"intent"`
	Agents []string `json:"agents,omitempty"`
	// Arguments are the call's arguments whole, as visible.Arguments
	// shows them: what is approved is what was shown.
	Arguments string `json:"arguments"`

	answer chan bool // gets the page's answer; buffered
	key    string    // the call's key in its run
}

// approve is the agents' approver: it asks the page and waits.
func (u *UI) approve(ctx context.Context, c onion.Call) (bool, error) {
	sc := scopeOf(ctx)
	if sc == nil {
		return false, errors.New("devui: the call is not of a run the page started, so nobody is there to approve it")
	}
	r := sc.run
	if u.set.autoApprove[c.Name] {
		u.mark(r, c, "auto")
		return true, nil
	}
	args, err := visible.Arguments(c.Arguments)
	if err != nil {
		u.mark(r, c, "denied")
		return false, fmt.Errorf("%w: approve calls of %s without asking (devui.AutoApprove, onion dev -approve %s)", err, c.Name, c.Name)
	}
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return false, errClosed
	}
	a := &approval{ID: u.newID("a"), Run: r.ID, CallID: visible.String(c.ID), Name: visible.String(c.Name),
		Intent: string(c.Intent), Agents: c.Agents, Arguments: u.scrub.text(args),
		answer: make(chan bool, 1), key: toolKey(c.Agents, c.ID)}
	u.approvals = append(u.approvals, a)
	if it := u.toolItem(r, c.Agents, c.ID); it != nil {
		it.Approval = "waiting"
		it.Status = "waiting for approval"
		u.publish("tool", itemEvent{r.ID, it})
	}
	u.publish("approval", a)
	u.mu.Unlock()

	var yes bool
	select {
	case yes = <-a.answer:
	case <-ctx.Done():
		err = ctx.Err()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dropApproval(a)
	verdict := "denied"
	if yes {
		verdict = "approved"
	}
	if it := r.tools[a.key]; it != nil {
		it.Approval = verdict
		it.Status = "running"
		u.publish("tool", itemEvent{r.ID, it})
	}
	return yes, err
}

// mark records how the call c of r was approved. u.mu is not held.
func (u *UI) mark(r *run, c onion.Call, verdict string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if it := u.toolItem(r, c.Agents, c.ID); it != nil {
		it.Approval = verdict
		u.publish("tool", itemEvent{r.ID, it})
	}
}

// answer gives the page's answer to the approval id.
func (u *UI) answer(id string, yes bool) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, a := range u.approvals {
		if a.ID == id {
			u.dropApproval(a)
			a.answer <- yes // buffered, and answered once: dropped now
			return nil
		}
	}
	return fmt.Errorf("devui: no call waits for approval %q: it was answered, or its run ended", id)
}

// dropApproval forgets a, answered or given up. u.mu is held.
func (u *UI) dropApproval(a *approval) {
	for i, o := range u.approvals {
		if o == a {
			u.approvals = append(u.approvals[:i], u.approvals[i+1:]...)
			u.publish("approval_done", a.ID)
			return
		}
	}
}
