package devserver_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// TestWorkerKilledDuringSubAgentWrite: the lead hands shop a task; the
// worker running shop's write is SIGKILLed. The sub-run is a child
// workflow, so the write ran once and ends outcome_unknown, shop answers
// on the next worker, and the lead's run finishes with it.
func TestWorkerKilledDuringSubAgentWrite(t *testing.T) {
	srv, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("shop", `{"task":"Send the parcel to Ada"}`)), // the lead
		oniontest.ToolCalls(oniontest.Call("send", `{"To":"Ada"}`)),                      // shop
		oniontest.Text("I cannot tell whether the parcel went out."),                     // shop, after the kill
		oniontest.Text("Shop could not tell whether the parcel went out; please check."), // the lead
	)
	record := filepath.Join(t.TempDir(), "record")
	first := startWorker(t, srv, model.URL(), "crash-sub", record, "send", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, "crash-sub", testagent.LeadName, "Send the parcel to Ada",
		temporal.WorkflowID("crash-sub"), temporal.HeartbeatTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	first.expect(t, "started send")
	first.kill(t)
	startWorker(t, srv, model.URL(), "crash-sub", record, "send", 2)
	res, err := temporal.Result(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	got := records(t, record)
	// The write's key is the child's: its workflow ID is the lead's call's key.
	if len(got) != 1 || got[0].tool != "send" || got[0].worker != "worker1" || !strings.HasPrefix(got[0].key, "crash-sub/"+run.GetRunID()+"/tool/1/") {
		t.Errorf("tool executions %+v, want the write once, on worker 1, keyed under the lead's call", got)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "shop" || res.ToolCalls[0].Outcome != onion.Succeeded ||
		res.ToolCalls[0].Output != "I cannot tell whether the parcel went out." || !strings.HasPrefix(res.Output, "Shop could not tell") {
		t.Fatalf("calls %+v, answer %q", res.ToolCalls, res.Output)
	}
	if res.Usage.Requests != 4 || res.ByAgent["lead"].Requests != 2 || res.ByAgent["lead/shop"].Requests != 2 {
		t.Errorf("usage %+v by agent %+v", res.Usage, res.ByAgent)
	}
	// The child ran its write as an activity of its own, which ended
	// with the worker.
	child := childOf(ctx, t, c, "crash-sub")
	if child == "" || got == nil || !strings.HasPrefix(got[0].key, child+"/") {
		t.Errorf("child workflow %q, keys %+v", child, got)
	}
	saveHistory(t, c, "crash-sub", "sub-agent-write-cut")
}

// TestSubAgentApprovalOnServer: a call inside a sub-run that needs
// approval is listed by Pending of the lead's run, with the path of
// agents and the sub-run's ID, and Approve given the lead's run ID lets
// it run.
func TestSubAgentApprovalOnServer(t *testing.T) {
	_, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("shop", `{"task":"Refund order 7"}`)),
		oniontest.ToolCalls(oniontest.Call("refund", `{"Order":7}`)),
		oniontest.Text("Refunded."),
		oniontest.Text("Order 7 is refunded."),
	)
	var mu sync.Mutex
	var refunds []string
	serveAgent(t, c, model, "sub-approval", func(ctx context.Context, tool string) (string, error) {
		call, _ := onion.CallInfo(ctx)
		mu.Lock()
		defer mu.Unlock()
		refunds = append(refunds, call.IdempotencyKey)
		return tool + " done", nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, "sub-approval", testagent.LeadName, "Refund order 7", temporal.WorkflowID("sub-approval"))
	if err != nil {
		t.Fatal(err)
	}
	var pending []onion.Call
	for len(pending) == 0 && ctx.Err() == nil {
		if pending, err = temporal.Pending(ctx, c, "sub-approval"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(pending) != 1 || pending[0].Name != "refund" || !slices.Equal(pending[0].Agents, []string{"lead", "shop"}) ||
		!strings.HasPrefix(pending[0].RunID, "sub-approval/") {
		t.Fatalf("pending %+v", pending)
	}
	if err := temporal.Approve(ctx, c, "sub-approval", pending[0].ID, true); err != nil {
		t.Fatal(err)
	}
	res, err := temporal.Result(ctx, run)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || res.Output != "Order 7 is refunded." || len(refunds) != 1 || refunds[0] != pending[0].IdempotencyKey {
		t.Fatalf("err %v, answer %+v, refunds %v", err, res, refunds)
	}
}

// TestSubAgentCanceledOnServer: cancelling the lead's run while a write
// inside its sub-run is in flight cancels the sub-run too: the write ends
// outcome_unknown there, so does the lead's call of the sub-agent, and the
// lead's run ends canceled.
func TestSubAgentCanceledOnServer(t *testing.T) {
	_, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("shop", `{"task":"Send the parcel to Ada"}`)),
		oniontest.ToolCalls(oniontest.Call("send", `{"To":"Ada"}`)),
	)
	started := make(chan struct{})
	serveAgent(t, c, model, "sub-cancel", func(ctx context.Context, tool string) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, "sub-cancel", testagent.LeadName, "Send the parcel to Ada",
		temporal.WorkflowID("sub-cancel"), temporal.HeartbeatTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the write never started")
	}
	var child string
	for child == "" && ctx.Err() == nil {
		pending, err := temporal.Pending(ctx, c, "sub-cancel") // none, but the query works inside
		if err != nil || len(pending) != 0 {
			t.Fatalf("pending %v, %v", pending, err)
		}
		child = childOf(ctx, t, c, "sub-cancel")
	}
	if err := c.CancelWorkflow(ctx, "sub-cancel", ""); err != nil {
		t.Fatal(err)
	}
	res, err := temporal.Result(ctx, run)
	if err == nil || res == nil || res.StopReason != onion.StopCanceled || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.OutcomeUnknown {
		t.Fatalf("err %v, result %+v", err, res)
	}
	inner, err := temporal.Result(ctx, c.GetWorkflow(ctx, child, ""))
	if inner == nil || inner.StopReason != onion.StopCanceled || len(inner.ToolCalls) != 1 || inner.ToolCalls[0].Name != "send" ||
		inner.ToolCalls[0].Outcome != onion.OutcomeUnknown {
		t.Errorf("the sub-run: err %v, result %+v", err, inner)
	}
}

// childOf is the workflow ID of the child workflow the run id started,
// "" while it has started none.
func childOf(ctx context.Context, t *testing.T, c client.Client, id string) string {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
			return a.GetWorkflowExecution().GetWorkflowId()
		}
	}
	return ""
}
