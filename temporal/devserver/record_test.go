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
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: " "}.Marshal(fetchHistory(context.Background(), t, c, id))
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

// fetchHistory is the whole history of the run id, as it is now.
func fetchHistory(ctx context.Context, t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	h := &historypb.History{}
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	return h
}

// tenRounds runs ten rounds of tool calls (a read and a write each) with
// opts and returns the result.
func tenRounds(t *testing.T, id string, opts ...temporal.StartOption) (client.Client, *onion.Result) {
	t.Helper()
	var steps []oniontest.Step
	for range 10 {
		steps = append(steps, oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`), oniontest.Call("note", `{"Text":"counted"}`)))
	}
	steps = append(steps, oniontest.Text("Counted ten times."))
	_, model, c := crashSetup(t, steps...)
	serveAgent(t, c, model, id, func(ctx context.Context, tool string) (string, error) { return tool + " done", nil })
	ctx := context.Background()
	run, err := temporal.Start(ctx, c, id, testagent.Name, "Count A1 ten times", append(opts, temporal.WorkflowID(id))...)
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
	return c, res
}

// TestContinueAsNewOnServer runs the ten rounds with a history budget of
// 60 events: the run continues as new several times and ends with every
// call of every round.
func TestContinueAsNewOnServer(t *testing.T) {
	c, _ := tenRounds(t, "budget", temporal.HistoryBudget(60, 1<<30))
	// The last run of the chain began from the state the one before it
	// carried over.
	it := c.GetWorkflowHistory(context.Background(), "budget", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	first, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	attrs := first.GetWorkflowExecutionStartedEventAttributes()
	if attrs.GetContinuedExecutionRunId() == "" {
		t.Fatal("the run never continued as new")
	}
	historyFigures(t, c, "budget")
	saveHistory(t, c, "budget", "continued")
}

// TestTenIterations runs ten rounds of tool calls (a read and a write
// each) and reports the history's size.
func TestTenIterations(t *testing.T) {
	c, _ := tenRounds(t, "ten")
	historyFigures(t, c, "ten")
	saveHistory(t, c, "ten", "ten-iterations")
}
