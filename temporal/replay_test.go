package temporal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// TestReplayRecordedHistories replays the histories of real runs on the
// embedded server (recorded by the devserver module's tests with -record):
// a change to the workflow that would break runs already going fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files := recordedHistories(t)
	if len(files) < 6 {
		t.Fatalf("%d recorded histories, want the 6 the devserver tests record at least", len(files))
	}
	rt, err := newRuntime([]*onion.Agent{replayLead(t, replayAgent(t))}) // and its tool, testagent's agent
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(rt.run, workflow.RegisterOptions{Name: WorkflowName})
			if err := replay(r, f); err != nil {
				t.Fatalf("replay of %s: %v", f, err)
			}
		})
	}
}

// recordedIDs are the workflow IDs of the recorded runs whose replay
// depends on it: a child workflow's ID is made from its parent's. The
// replayer calls any other run "ReplayId".
var recordedIDs = map[string]string{"sub-agent-write-cut.json": "crash-sub"}

// replay replays the recorded history in file with r, under the run's
// workflow ID when it matters.
func replay(r worker.WorkflowReplayer, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		return err
	}
	var opts worker.ReplayWorkflowHistoryOptions
	if id, ok := recordedIDs[filepath.Base(file)]; ok {
		opts.OriginalExecution = workflow.Execution{ID: id}
	}
	return r.ReplayWorkflowHistoryWithOptions(quietLogger{}, h, opts)
}

// replayLead is testagent's lead, whose tool is agent, with a model that
// fails as replayAgent's does.
func replayLead(t *testing.T, agent *onion.Agent) *onion.Agent {
	t.Helper()
	lead, err := testagent.NewLead(agent, onion.WithModel(noModel))
	if err != nil {
		t.Fatal(err)
	}
	return lead
}

// recordedHistories are the files of the recorded histories; none fails
// the test.
func recordedHistories(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	return files
}

// noModel is the model of a replay, which asks none.
var noModel = onion.ModelFunc(func(context.Context, *onion.Request, func(onion.Delta)) (*onion.Response, error) {
	return nil, errors.New("a replay asks no model")
})

// replayAgent is testagent with opts, whose tools and model fail: a
// replay runs no tool and asks no model.
func replayAgent(t *testing.T, opts ...onion.Option) *onion.Agent {
	t.Helper()
	agent, err := testagent.New(func(context.Context, string) (string, error) {
		return "", errors.New("a replay runs no tool")
	}, append([]onion.Option{onion.WithModel(noModel)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return agent
}
