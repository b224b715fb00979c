package temporal

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

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
		t.Fatalf("%d recorded histories, want the 6 the devserver tests record", len(files))
	}
	rt, err := newRuntime([]*onion.Agent{replayAgent(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(rt.run, workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger{}, f); err != nil {
				t.Fatalf("replay of %s: %v", f, err)
			}
		})
	}
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

// replayAgent is testagent with opts, whose tools and model fail: a
// replay runs no tool and asks no model.
func replayAgent(t *testing.T, opts ...onion.Option) *onion.Agent {
	t.Helper()
	agent, err := testagent.New(func(context.Context, string) (string, error) {
		return "", errors.New("a replay runs no tool")
	}, append([]onion.Option{onion.WithModel(onion.ModelFunc(func(context.Context, *onion.Request, func(onion.Delta)) (*onion.Response, error) {
		return nil, errors.New("a replay asks no model")
	}))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return agent
}
