package temporal

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
)

// This file is agents as tools in a durable run: a call of an agent given
// as a tool is a child workflow, a durable run of that agent of its own,
// so its calls keep their own activities, idempotency keys and
// at-most-once writes, and a worker lost in the middle loses nothing.

// childrenQuery lists the workflow IDs of the runs a run's calls handed
// tasks to and that are still going, for Pending and Approve.
const childrenQuery = "onion.children"

// subAgent is the tool of the call c and the agent it hands its task to,
// that agent nil when c's tool is no agent or the run was started before
// sub-runs were child workflows.
func (r *wrun) subAgent(c loop.Call) (*onion.Tool, *onion.Agent) {
	if !r.in.Settings.ChildRuns {
		return nil, nil
	}
	t, ok := r.agent.Tools().Get(c.Name)
	if !ok {
		return nil, nil
	}
	return t, drive.SubAgent(t)
}

// path is the agents from the outermost run down to this run's agent.
func (r *wrun) path() []string {
	return append(slices.Clip(r.in.Path), r.in.Agent)
}

// runSubAgent runs the call c of the agent sub as a child workflow on the
// run's task queue: a fresh run of sub with the task of c's arguments,
// whose ID is c's idempotency key (hashed when too long; the same on every
// replay, different for every other call of any run). Its answer is the
// call's output, its usage goes to the run's Result by path of agents,
// and cancelling the run cancels it and waits for it to end, so that a
// write in flight inside ends outcome_unknown and so does this call.
func (r *wrun) runSubAgent(ctx workflow.Context, c loop.Call, t *onion.Tool, sub *onion.Agent) loop.Input {
	// The arguments are checked, and the task made, once: patterns run
	// with a time limit, which a replay must not meet otherwise.
	var prep subTask
	if err := workflow.SideEffect(ctx, func(workflow.Context) any {
		task, err := drive.SubAgentTask(t, c.Arguments, r.st.Messages)
		if err != nil {
			return subTask{Error: err.Error()}
		}
		return subTask{Task: task}
	}).Get(&prep); err != nil || prep.Error != "" {
		return loop.Input{Done: &loop.Done{CallID: c.ID, Failure: loop.BadArguments, Error: cmp.Or(prep.Error, fmt.Sprint(err))}}
	}
	info := workflow.GetInfo(ctx)
	id := childID(callKey(info.WorkflowExecution.ID, info.FirstRunID, c))
	in := runInput{Agent: sub.Name(), Prompt: prep.Task, Settings: r.in.Settings, Trace: r.carrier(c.ID), Path: r.path(),
		Answer: drive.SubAgentAnswer(sub)}
	if n := payloadSize(in); n > maxPayload || n < 0 {
		return loop.Input{Done: &loop.Done{CallID: c.ID, Failure: loop.BadArguments,
			Error: tooLarge("the task", n) + "; the agent did not run"}}
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:          id,
		WaitForCancellation: true,
	})
	fut := workflow.ExecuteChildWorkflow(cctx, WorkflowName, in)
	var started workflow.Execution
	if err := fut.GetChildWorkflowExecution().Get(ctx, &started); err == nil {
		r.children[c.ID] = started.ID
	}
	var res loop.Result
	err := fut.Get(ctx, &res)
	delete(r.children, c.ID)
	if err != nil {
		return loop.Input{Done: subDone(c, sub.Name(), res, err)}
	}
	r.addSubUsage(sub.Name(), res)
	d := subDone(c, sub.Name(), res, nil)
	if d.Failure == "" && (in.Answer != nil || len(res.AnswerProblems) > 0) {
		var out subTask
		if err := workflow.SideEffect(ctx, func(workflow.Context) any {
			if len(res.AnswerProblems) > 0 {
				return subTask{Error: fmt.Sprintf("agent %s: the answer does not fit: %s", sub.Name(), strings.Join(res.AnswerProblems, "; "))}
			}
			text, err := drive.SubAgentOutput(sub, res.Output)
			if err != nil {
				return subTask{Error: fmt.Sprintf("agent %s: %v", sub.Name(), err)}
			}
			return subTask{Task: text}
		}).Get(&out); err != nil || out.Error != "" {
			d.Failure, d.Error = loop.ToolFailed, cmp.Or(out.Error, fmt.Sprint(err))
		} else {
			d.Output = out.Task
		}
	}
	return loop.Input{Done: d}
}

// maxChildID bounds a sub-run's workflow ID, well under the 1,000 bytes
// Temporal takes by default, since each level of agents adds to its
// caller's ID.
const maxChildID = 512

// childID is the workflow ID of the sub-run of a call whose idempotency
// key is key: the key, or when it is too long a hash of it, the same on
// every replay.
func childID(key string) string {
	if len(key) <= maxChildID {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "onion-sub-" + hex.EncodeToString(sum[:16])
}

// subTask is what a side effect of a sub-run records: a text (the task,
// or the answer the caller reads), or what was wrong.
type subTask struct {
	Task  string `json:"task,omitempty"`
	Error string `json:"error,omitempty"`
}

// subDone is how the call c of the agent name ended, given the child
// run's result and error: its answer, or a failure. A child that was
// canceled, or ended in a way that says nothing of what it did, cut the
// call: a sub-agent that may write then ends outcome_unknown.
func subDone(c loop.Call, name string, res loop.Result, err error) *loop.Done {
	d := &loop.Done{CallID: c.ID}
	var canceled *temporal.CanceledError
	switch {
	case err == nil && res.StopReason.Answered():
		d.Output = res.Output
	case err == nil && res.StopReason == loop.StopCanceled, errors.As(err, &canceled):
		d.Failure, d.Error = loop.Cut, "the run was canceled"
	case err == nil:
		d.Failure, d.Error = loop.ToolFailed, fmt.Sprintf("agent %s stopped (%s): %s", name, res.StopReason, cmp.Or(res.Error, res.Output))
	case c.Intent == loop.Read:
		d.Failure, d.Error = loop.ToolFailed, fmt.Sprintf("agent %s: %s", name, cause(err))
	default:
		d.Failure, d.Error = loop.Cut, fmt.Sprintf("agent %s ended without an answer: %s", name, cause(err))
	}
	return d
}

// addSubUsage adds the usage of a child run of the agent name to the
// run's breakdown by path, which the run's state carries across
// continue-as-new.
func (r *wrun) addSubUsage(name string, res loop.Result) {
	path := strings.Join(append(r.path(), name), "/")
	r.st.Result.ByAgent = loop.AddSubRun(r.st.Result.ByAgent, path, res.Usage, res.ByAgent)
}

// withSubUsage is res, the run's final result, with its sub-runs' usage
// added to Usage and its own under its path, as Run reports it.
func (r *wrun) withSubUsage(res loop.Result) loop.Result {
	res.Usage, res.ByAgent = loop.WithSubRuns(res.Usage, res.ByAgent, strings.Join(r.path(), "/"))
	return res
}

// callers are the agents on path that this worker serves, nearest
// first: the agents whose calls led to a sub-run.
func (rt *runtime) callers(path []string) []*onion.Agent {
	var out []*onion.Agent
	for _, name := range slices.Backward(path) {
		if a, err := rt.agent(name); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// callerHooks are the hooks of the agents whose calls led to a sub-run,
// nearest first: a call inside a sub-agent reaches its callers' tool
// hooks too, as in Run. The run works them out once, when it starts.
func callerHooks(callers []*onion.Agent) []onion.Hooks {
	var hooks []onion.Hooks
	for _, a := range callers {
		hooks = append(hooks, drive.RunConfigOf(a).Hooks...)
	}
	return hooks
}

// instrument is the instruments of a run of a: a's own, else, for the run
// of an agent given as a tool, those of the nearest of its callers that
// has some, as in Run (the sub-run's spans are then children of its
// caller's tool span, whose context its input carries).
func (rt *runtime) instrument(a *onion.Agent, path []string) onion.Instrument {
	if in := drive.Instrument(a); in != nil {
		return in
	}
	for _, caller := range rt.callers(path) {
		if in := drive.Instrument(caller); in != nil {
			return in
		}
	}
	return nil
}

// childIDs is what the children query answers: the workflow IDs of the
// sub-runs going on, in the order of their calls.
func (r *wrun) childIDs() []string {
	ids := make([]string, 0, len(r.children))
	for _, c := range r.st.Calls {
		if id, ok := r.children[c.ID]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// pendingTree is Pending of the run workflowID and of the sub-runs going
// on inside it, depth first, down to depth levels.
func pendingTree(ctx context.Context, c client.Client, workflowID string, depth int) ([]onion.Call, error) {
	calls, err := query[[]onion.Call](ctx, c, workflowID, pendingQuery, "pending calls")
	if err != nil || depth <= 0 {
		return calls, err
	}
	children, err := query[[]string](ctx, c, workflowID, childrenQuery, "sub-runs")
	if err != nil {
		return calls, nil // a worker from before sub-runs, or a run that has none
	}
	for _, id := range children {
		more, err := pendingTree(ctx, c, id, depth-1)
		if err != nil {
			return nil, err
		}
		calls = append(calls, more...)
	}
	return calls, nil
}

// holder is the workflow ID of the run, workflowID or one of its sub-runs,
// where the call callID waits for approval; "" when none has it.
func holder(ctx context.Context, c client.Client, workflowID, callID string) (string, error) {
	calls, err := pendingTree(ctx, c, workflowID, onion.MaxAgentDepth)
	if err != nil {
		return "", err
	}
	for _, call := range calls {
		if call.ID == callID {
			return call.RunID, nil
		}
	}
	return "", nil
}
