package temporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
)

// This file is approval in a durable run: a call that needs it waits, as
// long as it takes and across any crash, for a Decision sent with Approve
// (an Update) or ApproveSignal; Pending (a query) lists the calls waiting.

// The names of the workflow's handlers.
const (
	// ApproveSignal is the signal that carries a Decision, for senders
	// that cannot wait for an Update's answer. A Decision for no waiting
	// call is ignored.
	ApproveSignal = "onion.approve"
	// approveUpdate is the Update Approve sends.
	approveUpdate = "onion.approve"
	// pendingQuery is the query Pending sends.
	pendingQuery = "onion.pending"
	// conversationQuery is the query Conversation sends.
	conversationQuery = "onion.conversation"
)

// Decision answers one call waiting for approval.
type Decision struct {
	// CallID is the ID of the call, as Pending returned it.
	CallID string `json:"call_id"`
	// Approved lets the call run; false denies it.
	Approved bool `json:"approved"`
	// Reason says why a call was denied (default "denied with Approve").
	Reason string `json:"reason,omitempty"`
}

// handle sets the workflow's query, Update and signal handlers.
func (r *wrun) handle(ctx workflow.Context) error {
	workflowID, chain := workflow.GetInfo(ctx).WorkflowExecution.ID, workflow.GetInfo(ctx).FirstRunID
	if err := workflow.SetQueryHandler(ctx, pendingQuery, func() ([]onion.Call, error) {
		calls := make([]onion.Call, 0, len(r.waiting))
		for _, c := range r.waiting {
			if _, answered := r.decisions[c.ID]; !answered {
				call := drive.CallOf(r.st.RunID, c)
				call.IdempotencyKey = callKey(workflowID, chain, c) // the key the tool will see
				if len(r.in.Path) > 0 {
					call.Agents = r.path()
				}
				calls = append(calls, call)
			}
		}
		return calls, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, childrenQuery, func() ([]string, error) {
		return r.childIDs(), nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, conversationQuery, func() ([]loop.Message, error) {
		return r.st.Messages, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, approveUpdate,
		func(ctx workflow.Context, d Decision) error {
			// Two Updates for one call may pass the validator before either
			// handler runs: the first answer stands.
			if err := r.check(d); err != nil {
				return err
			}
			r.decide(d)
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, d Decision) error { return r.check(d) }},
	); err != nil {
		return err
	}
	signals := workflow.GetSignalChannel(ctx, ApproveSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var d Decision
			if !signals.Receive(ctx, &d) {
				return
			}
			if r.check(d) == nil {
				r.decide(d)
			}
		}
	})
	return nil
}

// check refuses a Decision for a call that is not waiting; the Update's
// validator, so that a refused Decision leaves no trace in the history.
func (r *wrun) check(d Decision) error {
	if !slices.ContainsFunc(r.waiting, func(c loop.Call) bool { return c.ID == d.CallID }) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("no call %q waits for approval", d.CallID), "onion.NoSuchCall", nil)
	}
	if _, answered := r.decisions[d.CallID]; answered {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("call %q was already answered", d.CallID), "onion.AlreadyAnswered", nil)
	}
	return nil
}

func (r *wrun) decide(d Decision) {
	if !d.Approved && d.Reason == "" {
		d.Reason = "denied with Approve"
	}
	r.decisions[d.CallID] = d
}

// approve answers an AskApproval effect: yes at once when the call needs
// no approval (ApproveIf said so), else whatever Decision comes within the
// approval timeout; none means denied.
func (r *wrun) approve(ctx workflow.Context, c loop.Call) loop.Input {
	lctx := workflow.WithLocalActivityOptions(r.traced(ctx, c.ID), workflow.LocalActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	need := true
	if err := workflow.ExecuteLocalActivity(lctx, approvalActivity, approvalInput{Agent: r.in.Agent, RunID: r.st.RunID, Call: c}).Get(ctx, &need); err != nil {
		need = true // fail closed: ask
	}
	if !need {
		return loop.Input{Approval: &loop.Approval{CallID: c.ID, Granted: true}}
	}
	r.waiting = append(r.waiting, c)
	defer func() {
		r.waiting = slices.DeleteFunc(r.waiting, func(w loop.Call) bool { return w.ID == c.ID })
		delete(r.decisions, c.ID)
	}()
	timeout := r.in.Settings.ApprovalTimeout
	ok, err := workflow.AwaitWithTimeout(ctx, timeout, func() bool {
		_, answered := r.decisions[c.ID]
		return answered
	})
	switch {
	case err != nil:
		return loop.Input{Approval: &loop.Approval{CallID: c.ID, Reason: "the run was canceled while the call waited for approval"}}
	case !ok:
		return loop.Input{Approval: &loop.Approval{CallID: c.ID, Reason: fmt.Sprintf("no answer within the approval timeout (%v)", timeout)}}
	}
	d := r.decisions[c.ID]
	return loop.Input{Approval: &loop.Approval{CallID: c.ID, Granted: d.Approved, Reason: d.Reason}}
}

// Pending returns the calls of the run workflowID that wait for approval,
// in the order they began to wait, then those of the runs of agents it
// handed tasks to (a call inside one has that run's workflow ID as its
// RunID, and the path of agents in Agents). It is a Temporal query,
// answered by a worker: while no worker of the run's task queue is alive
// it fails (or waits for ctx), and the calls are still waiting.
func Pending(ctx context.Context, c client.Client, workflowID string) ([]onion.Call, error) {
	return pendingTree(ctx, c, workflowID, onion.MaxAgentDepth)
}

// Approve answers the call callID (the ID of a call Pending returned) of
// the run workflowID, or of a run of an agent it handed a task to: ok
// lets it run, false denies it. It returns once the run has the answer,
// which needs a worker: while none is alive it waits for one, up to ctx.
// A call that does not wait for approval, or was already answered, is an
// error, and leaves no trace in the run's history.
func Approve(ctx context.Context, c client.Client, workflowID, callID string, ok bool) error {
	err := approve(ctx, c, workflowID, callID, ok)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == "onion.NoSuchCall" {
		// The call may wait inside a run of an agent given as a tool.
		if id, herr := holder(ctx, c, workflowID, callID); herr == nil && id != "" && id != workflowID {
			return approve(ctx, c, id, callID, ok)
		}
	}
	return err
}

// approve sends the Decision on the call callID to the run workflowID.
func approve(ctx context.Context, c client.Client, workflowID, callID string, ok bool) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   approveUpdate,
		Args:         []any{Decision{CallID: callID, Approved: ok}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("temporal: approve call %q of %s: %w", callID, workflowID, err)
	}
	return nil
}
