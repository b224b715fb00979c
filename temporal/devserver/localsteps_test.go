package devserver_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// TestLocalStepsLostWorker shows the price temporal.LocalSteps states: a
// worker killed during a local read loses every step of its workflow
// task, so the next worker sends the first model request again (its
// answer was never recorded) and runs the read again, as attempt 1. The
// run still finishes.
func TestLocalStepsLostWorker(t *testing.T) {
	srv, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)),
		oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)), // the first request, sent again
		oniontest.Text("A1 is in stock."),
	)
	record := filepath.Join(t.TempDir(), "record")
	first := startWorker(t, srv, model.URL(), "local-lost", record, "stock", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, "local-lost", testagent.Name, "Is A1 in stock?",
		temporal.WorkflowID("local-lost"), temporal.LocalSteps())
	if err != nil {
		t.Fatal(err)
	}
	first.expect(t, "started stock")
	killed := first.kill(t)
	startWorker(t, srv, model.URL(), "local-lost", record, "stock", 2)
	res, err := temporal.Result(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	got := records(t, record)
	if len(got) != 2 || got[0].worker != "worker1" || got[1].worker != "worker2" || got[1].attempt != 1 {
		t.Errorf("tool executions %+v, want the read on worker 1, then again on worker 2 as attempt 1", got)
	}
	if res.Output != "A1 is in stock." || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded ||
		len(model.Requests()) != 3 || res.Usage.Requests != 2 {
		t.Errorf("answer %q after %d model requests (%d in the result), want 3 sent and 2 recorded", res.Output, len(model.Requests()), res.Usage.Requests)
	}
	t.Logf("a local read's lost worker: kill → result %v", time.Since(killed).Round(time.Millisecond))
}
