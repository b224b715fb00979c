package devserver_test

// The processes of the tests: this test binary, run again as a worker of
// the embedded server or as an approver, and the test's side of them.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/onionkit/onion"
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
	envSlow    = "ONION_TEST_SLOW"     // tools that take a while: send=2s,stock=300ms
	envStop    = "ONION_TEST_STOP"     // the worker's WorkerStopTimeout, if set
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

// serveWorker is a worker process: it serves testagent until killed or
// stopped (SIGTERM: a graceful stop), appends each tool execution to the
// record file, and says on stdout when a tool starts.
func serveWorker(hostPort string) error {
	c, err := client.Dial(dialOptions(hostPort))
	if err != nil {
		return err
	}
	defer c.Close()
	gen := os.Getenv(envGen)
	block := strings.Split(os.Getenv(envBlock), ",")
	slow, err := durations(os.Getenv(envSlow))
	if err != nil {
		return err
	}
	var mu sync.Mutex
	on := func(ctx context.Context, tool string) (string, error) {
		call, _ := onion.CallInfo(ctx)
		mu.Lock()
		f, err := os.OpenFile(os.Getenv(envRecord), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintf(f, "%s %s worker%s %d\n", tool, call.IdempotencyKey, gen, call.Attempt)
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
		select {
		case <-time.After(slow[tool]):
		case <-ctx.Done():
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
	lead, err := testagent.NewLead(agent, opts...)
	if err != nil {
		return err
	}
	wo := worker.Options{
		Identity: "onion-test-worker-" + gen,
		// A killed worker's runs move to another one after 1 s, not 5.
		StickyScheduleToStartTimeout: time.Second,
	}
	if d := os.Getenv(envStop); d != "" {
		if wo.WorkerStopTimeout, err = time.ParseDuration(d); err != nil {
			return err
		}
	}
	w, err := temporal.NewWorkerWithOptions(c, os.Getenv(envQueue), wo, agent, lead)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	return w.Run(worker.InterruptCh()) // until SIGTERM, or killed
}

// dialOptions are the client options of the tests' processes: the
// server's first answer may take long on a loaded machine, and it is on
// the same machine, where gzip is CPU for nothing (see the package doc).
func dialOptions(hostPort string) client.Options {
	o := client.Options{HostPort: hostPort, Logger: quiet{}}
	o.ConnectionOptions.GetSystemInfoTimeout = time.Minute
	// snippet:nogzip
	o.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	// end snippet:nogzip
	return o
}

// durations reads tool=duration pairs separated by commas.
func durations(s string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for kv := range strings.SplitSeq(s, ",") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", envSlow, kv, err)
		}
		out[k] = d
	}
	return out, nil
}

// approveFirst is an approver process: it approves the first call that
// the run id waits for, and says which on stdout.
func approveFirst(hostPort, id string) error {
	c, err := client.Dial(dialOptions(hostPort))
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
	gen   int
}

// startWorker starts worker process gen, with the variables env (such
// as envSlow=send=2s) in its environment, and waits until it is ready.
func startWorker(t *testing.T, srv *devserver.Server, model, queue, record, block string, gen int, env ...string) *proc {
	t.Helper()
	p := spawnWorker(t, srv, model, queue, record, block, gen, env...)
	p.expect(t, "ready")
	return p
}

// spawnWorker starts worker process gen, with the variables env in its
// environment.
func spawnWorker(t *testing.T, srv *devserver.Server, model, queue, record, block string, gen int, env ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorker+"="+srv.HostPort(), envModel+"="+model, envQueue+"="+queue,
		envRecord+"="+record, envBlock+"="+block, fmt.Sprintf("%s=%d", envGen, gen))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 256), gen: gen}
	go func() {
		defer close(p.lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			select {
			case p.lines <- s.Text():
			default: // nobody reads them: the process must not block on its stdout
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
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

// stop sends the process SIGTERM, as a deploy does, and waits for it to
// exit; it fails the test unless the worker stopped cleanly.
func (p *proc) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("worker %d after SIGTERM: %v", p.gen, err)
	}
	return time.Since(start)
}

// execution is one execution of a tool, as a worker recorded it.
type execution struct {
	tool, key, worker string
	attempt           int
}

func records(t *testing.T, path string) []execution {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []execution
	for line := range strings.Lines(string(b)) {
		var e execution
		if _, err := fmt.Sscanf(line, "%s %s %s %d", &e.tool, &e.key, &e.worker, &e.attempt); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}
