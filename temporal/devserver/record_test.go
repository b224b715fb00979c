package devserver_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// record rewrites the recorded histories the temporal module replays
// (temporal/testdata/histories): go test -run . -record
var record = flag.Bool("record", false, "write the runs' histories to ../testdata/histories for the replay tests")

// saveHistory writes the history of the run id to
// ../testdata/histories/name.json when -record is set.
func saveHistory(t *testing.T, c client.Client, id, name string) {
	t.Helper()
	if !*record {
		return
	}
	h := &historypb.History{}
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: " "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "testdata", "histories")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTenIterations runs ten rounds of tool calls (a read and a write
// each) and reports the history's size.
func TestTenIterations(t *testing.T) {
	var steps []oniontest.Step
	for range 10 {
		steps = append(steps, oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`), oniontest.Call("note", `{"Text":"counted"}`)))
	}
	steps = append(steps, oniontest.Text("Counted ten times."))
	srv, model, c := crashSetup(t, steps...)
	_ = srv
	agent, err := testagent.New(func(ctx context.Context, tool string) (string, error) { return tool + " done", nil },
		onion.BaseURL(model.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := temporal.NewWorker(c, "ten", agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx := context.Background()
	run, err := temporal.Start(ctx, c, "ten", testagent.Name, "Count A1 ten times", temporal.WorkflowID("ten"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := temporal.Result(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != 10 || len(res.ToolCalls) != 20 || res.Output != "Counted ten times." {
		t.Fatalf("iterations %d, %d calls, answer %q", res.Iterations, len(res.ToolCalls), res.Output)
	}
	historyFigures(t, c, "ten")
	saveHistory(t, c, "ten", "ten-iterations")
}
