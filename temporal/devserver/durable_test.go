package devserver_test

// Integration tests of durable runs against the embedded server: worker
// processes (this test binary, run again) are killed with SIGKILL in the
// middle of a tool call, and a second worker process picks the run up.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
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
	"github.com/onionkit/onion/temporal/devserver"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// The environment of a worker process.
const (
	envWorker  = "ONION_TEST_WORKER"   // the server's host:port; set in a worker process
	envModel   = "ONION_TEST_MODEL"    // the oniontest server's URL
	envQueue   = "ONION_TEST_QUEUE"    // the task queue
	envRecord  = "ONION_TEST_RECORD"   // the file each tool execution is appended to
	envBlock   = "ONION_TEST_BLOCK"    // tools that block until the worker dies
	envGen     = "ONION_TEST_WORKER_N" // which worker process this is, from 1
	envApprove = "ONION_TEST_APPROVE"  // the server's host:port; set in an approver process
	envRunID   = "ONION_TEST_RUN"      // the workflow ID an approver answers
)

func TestMain(m *testing.M) {
	if hp := os.Getenv(envWorker); hp != "" {
		if err := serveWorker(hp); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if hp := os.Getenv(envApprove); hp != "" {
		if err := approveFirst(hp, os.Getenv(envRunID)); err != nil {
			fmt.Fprintln(os.Stderr, "approver:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	flag.Parse()
	os.Exit(m.Run())
}

// serveWorker is a worker process: it serves testagent until killed, appends
// each tool execution to the record file, and says on stdout when a tool
// starts.
func serveWorker(hostPort string) error {
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: quiet{}})
	if err != nil {
		return err
	}
	defer c.Close()
	gen := os.Getenv(envGen)
	block := strings.Split(os.Getenv(envBlock), ",")
	var mu sync.Mutex
	on := func(ctx context.Context, tool string) (string, error) {
		call, _ := onion.CallInfo(ctx)
		mu.Lock()
		f, err := os.OpenFile(os.Getenv(envRecord), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "%s %s worker%s\n", tool, call.IdempotencyKey, gen)
			err = errors.Join(err, f.Close())
		}
		mu.Unlock()
		if err != nil {
			return "", err
		}
		fmt.Printf("started %s\n", tool)
		if gen == "1" && slices.Contains(block, tool) {
			<-ctx.Done() // until the process is killed
			return "", ctx.Err()
		}
		return tool + " done", nil
	}
	opts := []onion.Option{onion.BaseURL(os.Getenv(envModel)), onion.APIKey("test")}
	if path := os.Getenv(envTrace); path != "" {
		o, err := traceTo(path)
		if err != nil {
			return err
		}
		opts = append(opts, o)
	}
	agent, err := testagent.New(on, opts...)
	if err != nil {
		return err
	}
	w, err := temporal.NewWorker(c, os.Getenv(envQueue), agent)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	return w.Run(make(chan any)) // until killed
}

// approveFirst is an approver process: it approves the first call that
// the run id waits for, and says which on stdout.
func approveFirst(hostPort, id string) error {
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: quiet{}})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pending, err := temporal.Pending(ctx, c, id)
	if err != nil {
		return err
	}
	if len(pending) != 1 {
		return fmt.Errorf("%d calls wait, want 1: %+v", len(pending), pending)
	}
	if err := temporal.Approve(ctx, c, id, "nope", true); err == nil {
		return errors.New("an unknown call ID was accepted")
	}
	if err := temporal.Approve(ctx, c, id, pending[0].ID, true); err != nil {
		return err
	}
	fmt.Printf("approved %s %s\n", pending[0].Name, pending[0].Arguments)
	return nil
}

// proc is a worker process and the lines it prints.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
}

// startWorker starts worker process gen and waits until it is ready.
func startWorker(t *testing.T, srv *devserver.Server, model, queue, record, block string, gen int) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorker+"="+srv.HostPort(), envModel+"="+model, envQueue+"="+queue,
		envRecord+"="+record, envBlock+"="+block, fmt.Sprintf("%s=%d", envGen, gen))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		defer close(p.lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			p.lines <- s.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	p.expect(t, "ready")
	return p
}

// expect waits for the process to print line.
func (p *proc) expect(t *testing.T, line string) {
	t.Helper()
	timeout := time.NewTimer(2 * time.Minute)
	defer timeout.Stop()
	for {
		select {
		case got, ok := <-p.lines:
			if !ok {
				t.Fatalf("the worker exited before printing %q", line)
			}
			if got == line {
				return
			}
		case <-timeout.C:
			t.Fatalf("the worker did not print %q", line)
		}
	}
}

// kill ends the process with SIGKILL, as a crash or an OOM kill would.
func (p *proc) kill(t *testing.T) time.Time {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	return time.Now()
}

func records(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(b), "\n", " | "))
}

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
	c, err := client.Dial(client.Options{HostPort: srv.HostPort(), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return srv, model, c
}

// serveAgent starts a worker on queue serving testagent, whose tools do
// what on says, with model as its model and opts after it; the worker
// stops when the test ends.
func serveAgent(t *testing.T, c client.Client, model *oniontest.Server, queue string, on testagent.On, opts ...onion.Option) *onion.Agent {
	t.Helper()
	agent, err := testagent.New(on, append([]onion.Option{onion.BaseURL(model.URL()), onion.APIKey("test")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	w, err := temporal.NewWorker(c, queue, agent)
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
	if len(got) != 4 || got[0] != "send" || !strings.HasPrefix(got[1], "crash-write/"+run.GetRunID()+"/tool/1/") || got[2] != "worker1" {
		t.Errorf("tool executions %q, want the write once, on worker 1", got)
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
	t.Logf("write cut: executions %q; outcome %s (%s); kill → next model request %v, kill → result %v",
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
	if len(got) != 8 || got[0] != "stock" || got[2] != "worker1" || got[4] != "stock" || got[6] != "worker2" || got[1] != got[5] {
		t.Errorf("tool executions %q, want the read on worker 1, then again on worker 2 with the same key", got)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded || res.Output != "A1 is in stock." {
		t.Fatalf("calls %+v, answer %q", res.ToolCalls, res.Output)
	}
	t.Logf("read cut: executions %q; kill → next model request %v", got, resumedAt.Sub(killed).Round(time.Millisecond))
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
	if got := records(t, record); len(got) != 4 || got[2] != "worker2" {
		t.Errorf("tool executions %q, want the refund once, on worker 2", got)
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
