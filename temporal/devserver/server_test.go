package devserver_test

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	temporalsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion/temporal/devserver"
)

// greet is a trivial workflow with a timer, so that it needs the server's
// timer queue as well as its task queues.
func greet(ctx workflow.Context, name string) (string, error) {
	if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
		return "", err
	}
	return "hello " + name, nil
}

// runGreet runs greet on srv through a worker of its own and returns the
// answer.
func runGreet(t *testing.T, srv *devserver.Server, name string) string {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: srv.HostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatalf("dial %s: %v", srv.HostPort(), err)
	}
	defer c.Close()
	w := worker.New(c, "greet", worker.Options{})
	w.RegisterWorkflow(greet)
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "greet"}, greet, name)
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	return out
}

func TestStartRunStopStartAgain(t *testing.T) {
	ctx := context.Background()
	first, err := devserver.Start(ctx, devserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := runGreet(t, first, "one"); got != "hello one" {
		t.Errorf("first server's workflow returned %q", got)
	}
	if err := first.Stop(); err != nil {
		t.Fatalf("stop the first server: %v", err)
	}
	second, err := devserver.Start(ctx, devserver.Options{})
	if err != nil {
		t.Fatalf("a second server in the same process: %v", err)
	}
	defer func() {
		if err := second.Stop(); err != nil {
			t.Errorf("stop the second server: %v", err)
		}
	}()
	if second.HostPort() == "" {
		t.Fatal("no host:port")
	}
	if got := runGreet(t, second, "two"); got != "hello two" {
		t.Errorf("second server's workflow returned %q", got)
	}
}

func TestFileKeepsState(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "temporal.db")
	srv, err := devserver.Start(ctx, devserver.Options{DBFile: db})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: srv.HostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	// Started with no worker: the workflow waits in the file.
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kept", TaskQueue: "greet"}, greet, "file")
	c.Close()
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	srv, err = devserver.Start(ctx, devserver.Options{DBFile: db})
	if err != nil {
		t.Fatalf("start again on the same file: %v", err)
	}
	defer srv.Stop()
	c, err = client.Dial(client.Options{HostPort: srv.HostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "greet", worker.Options{})
	w.RegisterWorkflow(greet)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var out string
	if err := c.GetWorkflow(ctx, "kept", run.GetRunID()).Get(ctx, &out); err != nil {
		t.Fatalf("the workflow started before the restart: %v", err)
	}
	if out != "hello file" {
		t.Errorf("got %q", out)
	}
}

func TestPortIsUsed(t *testing.T) {
	first, err := devserver.Start(context.Background(), devserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop()
	_, port, _ := net.SplitHostPort(first.HostPort())
	p, _ := strconv.Atoi(port)
	second, err := devserver.Start(context.Background(), devserver.Options{Port: p})
	if err == nil {
		second.Stop()
		t.Fatalf("a second server on the first one's port %d started", p)
	}
	if !strings.Contains(err.Error(), port) {
		t.Errorf("the error does not name the port: %v", err)
	}
}

// quiet is a client logger that drops everything.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// TestVisibilityWithoutSlotIndexes: a server in memory lists its runs,
// by the fields the server indexes and by a custom search attribute,
// whose index it dropped.
func TestVisibilityWithoutSlotIndexes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := client.Dial(client.Options{HostPort: srv.HostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: devserver.Namespace, SearchAttributes: map[string]enumspb.IndexedValueType{"Shop": enumspb.INDEXED_VALUE_TYPE_KEYWORD}})
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, "greet", worker.Options{})
	w.RegisterWorkflow(greet)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	shop := temporalsdk.NewSearchAttributeKeyKeyword("Shop")
	var run client.WorkflowRun
	for run == nil { // until the namespace knows the attribute
		run, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "listed", TaskQueue: "greet",
			TypedSearchAttributes: temporalsdk.NewSearchAttributes(shop.ValueSet("north"))}, greet, "list")
		if err != nil && (ctx.Err() != nil || !strings.Contains(err.Error(), "no mapping defined")) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"WorkflowType = 'greet'", "Shop = 'north'"} {
		var ids []string
		for len(ids) == 0 && ctx.Err() == nil { // visibility is written after the run
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: devserver.Namespace, Query: q})
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			for _, e := range resp.GetExecutions() {
				ids = append(ids, e.GetExecution().GetWorkflowId())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !slices.Equal(ids, []string{"listed"}) {
			t.Errorf("%s: %v", q, ids)
		}
	}
}
