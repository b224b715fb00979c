package devserver_test

// Integration tests of durable runs against the embedded server: worker
// processes (this test binary, run again) are killed with SIGKILL in the
// middle of a tool call, and a second worker process picks the run up.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/devserver"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// crashSetup starts a server, a model scripted with steps and a client.
func crashSetup(t *testing.T, steps ...oniontest.Step) (*devserver.Server, *oniontest.Server, client.Client) {
	t.Helper()
	srv, err := devserver.Start(context.Background(), devserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	model := oniontest.NewServer(t, steps...)
	c, err := client.Dial(dialOptions(srv.HostPort()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return srv, model, c
}

// serveAgent starts a worker on queue serving testagent (and its lead,
// whose tool it is), whose tools do
// what on says, with model as its model and opts after it; the worker
// stops when the test ends.
func serveAgent(t testing.TB, c client.Client, model *oniontest.Server, queue string, on testagent.On, opts ...onion.Option) *onion.Agent {
	t.Helper()
	return serveAgentWith(t, c, model, queue, worker.Options{}, on, opts...)
}

// serveAgentWith is serveAgent with the worker's options wo.
func serveAgentWith(t testing.TB, c client.Client, model *oniontest.Server, queue string, wo worker.Options, on testagent.On, opts ...onion.Option) *onion.Agent {
	t.Helper()
	agent, err := testagent.New(on, append([]onion.Option{onion.BaseURL(model.URL()), onion.APIKey("test")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	lead, err := testagent.NewLead(agent, append([]onion.Option{onion.BaseURL(model.URL()), onion.APIKey("test")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	w, err := temporal.NewWorkerWithOptions(c, queue, wo, agent, lead)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return agent
}

// resumed is a model step that notes when the run's next request came.
func resumed(at *time.Time, step oniontest.Step) oniontest.Step {
	return oniontest.Func(func(oniontest.Request) oniontest.Step {
		*at = time.Now()
		return step
	})
}

func TestWorkerKilledDuringWrite(t *testing.T) {
	var resumedAt time.Time
	srv, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("send", `{"To":"Ada"}`), oniontest.Call("note", `{"Text":"sent"}`)),
		resumed(&resumedAt, oniontest.Text("I cannot tell whether the parcel went out; please check.")),
	)
	record := filepath.Join(t.TempDir(), "record")
	first := startWorker(t, srv, model.URL(), "crash-write", record, "send", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, "crash-write", testagent.Name, "Send the parcel to Ada",
		temporal.WorkflowID("crash-write"), temporal.HeartbeatTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	first.expect(t, "started send")
	killed := first.kill(t)
	startWorker(t, srv, model.URL(), "crash-write", record, "send", 2)
	res, err := temporal.Result(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	done := time.Now()
	got := records(t, record)
	// The key: the workflow ID, the chain's first run ID, the round and a
	// hash of the call ID.
	if len(got) != 1 || got[0].tool != "send" || !strings.HasPrefix(got[0].key, "crash-write/"+run.GetRunID()+"/tool/1/") || got[0].worker != "worker1" {
		t.Errorf("tool executions %+v, want the write once, on worker 1", got)
	}
	if len(res.ToolCalls) != 2 || res.ToolCalls[0].Outcome != onion.OutcomeUnknown || res.ToolCalls[1].Outcome != onion.Skipped {
		t.Fatalf("calls %+v", res.ToolCalls)
	}
	if !strings.HasPrefix(res.ToolCalls[1].Output, onion.SkippedPrefix) {
		t.Errorf("the later write's text: %q", res.ToolCalls[1].Output)
	}
	if res.Output != "I cannot tell whether the parcel went out; please check." {
		t.Errorf("answer %q", res.Output)
	}
	t.Logf("write cut: executions %+v; outcome %s (%s); kill → next model request %v, kill → result %v",
		got, res.ToolCalls[0].Outcome, res.ToolCalls[0].Error, resumedAt.Sub(killed).Round(time.Millisecond), done.Sub(killed).Round(time.Millisecond))
	historyFigures(t, c, "crash-write")
	saveHistory(t, c, "crash-write", "write-cut")
}

func TestWorkerKilledDuringRead(t *testing.T) {
	var resumedAt time.Time
	srv, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)),
		resumed(&resumedAt, oniontest.Text("A1 is in stock.")),
	)
	record := filepath.Join(t.TempDir(), "record")
	first := startWorker(t, srv, model.URL(), "crash-read", record, "stock", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, "crash-read", testagent.Name, "Is A1 in stock?",
		temporal.WorkflowID("crash-read"), temporal.HeartbeatTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	first.expect(t, "started stock")
	killed := first.kill(t)
	second := startWorker(t, srv, model.URL(), "crash-read", record, "stock", 2)
	res, err := temporal.Result(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	second.expect(t, "started stock")
	got := records(t, record)
	if len(got) != 2 || got[0].tool != "stock" || got[0].worker != "worker1" || got[1].tool != "stock" || got[1].worker != "worker2" ||
		got[0].key != got[1].key {
		t.Errorf("tool executions %+v, want the read on worker 1, then again on worker 2 with the same key", got)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded || res.Output != "A1 is in stock." {
		t.Fatalf("calls %+v, answer %q", res.ToolCalls, res.Output)
	}
	// The attempts as they happened: the tool saw attempt 2 on worker 2,
	// and the result says 2.
	if len(got) == 2 && (got[0].attempt != 1 || got[1].attempt != 2 || res.ToolCalls[0].Attempts != 2) {
		t.Errorf("the tool saw attempts %d and %d, the result says %d; want 1, 2 and 2", got[0].attempt, got[1].attempt, res.ToolCalls[0].Attempts)
	}
	t.Logf("read cut: executions %+v; kill → next model request %v", got, resumedAt.Sub(killed).Round(time.Millisecond))
	saveHistory(t, c, "crash-read", "read-cut")
}

func TestApprovalAfterWorkerRestart(t *testing.T) {
	srv, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("refund", `{"Order":42}`)),
		oniontest.Text("Order 42 is refunded."),
	)
	record := filepath.Join(t.TempDir(), "record")
	first := startWorker(t, srv, model.URL(), "approval", record, "", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, "approval", testagent.Name, "Refund order 42", temporal.WorkflowID("approval"))
	if err != nil {
		t.Fatal(err)
	}
	waitForEvent(ctx, t, c, "approval", enumspb.EVENT_TYPE_MARKER_RECORDED) // the approval check: the call now waits
	first.kill(t)
	second := startWorker(t, srv, model.URL(), "approval", record, "", 2)
	pending, err := temporal.Pending(ctx, c, "approval")
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Name != "refund" || string(pending[0].Arguments) != `{"Order":42}` {
		t.Fatalf("pending %+v", pending)
	}
	// A third process, neither worker, answers.
	approver := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	approver.Env = append(os.Environ(), envApprove+"="+srv.HostPort(), envRunID+"=approval")
	approver.Stderr = os.Stderr
	out, err := approver.Output()
	if err != nil {
		t.Fatalf("the approver process: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != `approved refund {"Order":42}` {
		t.Errorf("the approver printed %q", got)
	}
	res, err := temporal.Result(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	second.expect(t, "started refund")
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded || res.Output != "Order 42 is refunded." {
		t.Fatalf("calls %+v, answer %q", res.ToolCalls, res.Output)
	}
	if got := records(t, record); len(got) != 1 || got[0].worker != "worker2" {
		t.Errorf("tool executions %+v, want the refund once, on worker 2", got)
	}
	if err := temporal.Approve(ctx, c, "approval", pending[0].ID, true); err == nil {
		t.Error("an answer to a finished run's call was accepted")
	}
	saveHistory(t, c, "approval", "approval")
}

// waitForEvent long-polls the run's history until an event of type typ is
// in it.
func waitForEvent(ctx context.Context, t *testing.T, c client.Client, id string, typ enumspb.EventType) {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, "", true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.GetEventType() == typ {
			return
		}
	}
	t.Fatalf("the history of %s ended without a %v event", id, typ)
}

// historyFigures logs the size of a run's history.
func historyFigures(t *testing.T, c client.Client, id string) {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	info := d.GetWorkflowExecutionInfo()
	t.Logf("history of %s: %d events, %d bytes", id, info.GetHistoryLength(), info.GetHistorySizeBytes())
}
