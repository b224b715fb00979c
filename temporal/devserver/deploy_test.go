package devserver_test

// Deploys on the embedded server: a worker process stopped with SIGTERM
// lets its calls finish, worker processes SIGKILLed during one model
// request do not use up the model's retries, and twenty runs go through
// three worker processes that are killed and stopped under them.

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// TestGracefulStopLetsAWriteFinish stops the worker with SIGTERM while a
// write of 2 s runs on it: the write finishes and is reported (not
// outcome_unknown), and a worker started after the stop carries the run
// on.
func TestGracefulStopLetsAWriteFinish(t *testing.T) {
	t.Parallel()
	srv, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("send", `{"To":"Ada"}`), oniontest.Call("note", `{"Text":"sent"}`)),
		oniontest.Text("The parcel went out."),
	)
	record := filepath.Join(t.TempDir(), "record")
	slow := envSlow + "=send=2s"
	first := startWorker(t, srv, model.URL(), "graceful", record, "", 1, slow)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := temporal.Start(ctx, c, "graceful", testagent.Name, "Send the parcel to Ada",
		temporal.WorkflowID("graceful"), temporal.HeartbeatTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	first.expect(t, "started send")
	stopped := first.stop(t) // SIGTERM mid-write; returns once the process exited
	startWorker(t, srv, model.URL(), "graceful", record, "", 2, slow)
	res, err := temporal.Result(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 2 || res.ToolCalls[0].Outcome != onion.Succeeded || res.ToolCalls[1].Outcome != onion.Succeeded {
		t.Fatalf("calls %+v, want the write that ran through the stop succeeded, and the next one", res.ToolCalls)
	}
	got := records(t, record)
	if len(got) != 2 || got[0].tool != "send" || got[0].worker != "worker1" || got[1].tool != "note" || got[1].worker != "worker2" {
		t.Errorf("tool executions %+v, want send once on worker 1, then note on worker 2", got)
	}
	if stopped < time.Second || stopped > temporal.DefaultStopTimeout {
		t.Errorf("the stop took %v, want the rest of the 2 s write, under the stop timeout", stopped)
	}
	t.Logf("graceful stop: SIGTERM → exit %v (the write's rest), result %s %s", stopped.Round(time.Millisecond),
		res.ToolCalls[0].Outcome, res.ToolCalls[1].Outcome)
	saveHistory(t, c, "graceful", "graceful-stop")
}

// TestFiveLostWorkersDuringOneModelRequest kills five worker processes in
// turn while each holds the run's model request: the agent retries a
// failed request 3 times, yet the run finishes, on the sixth worker.
func TestFiveLostWorkersDuringOneModelRequest(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 8)
	held := oniontest.Func(func(oniontest.Request) oniontest.Step {
		arrived <- struct{}{}
		return oniontest.Text("never read").Delay(time.Minute) // until the worker dies
	})
	srv, model, c := crashSetup(t, held, held, held, held, held, oniontest.Text("Hello."))
	record := filepath.Join(t.TempDir(), "record")
	w := startWorker(t, srv, model.URL(), "lost-model", record, "", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	run, err := temporal.Start(ctx, c, "lost-model", testagent.Name, "Say hello",
		temporal.WorkflowID("lost-model"), temporal.HeartbeatTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	type ended struct {
		res *onion.Result
		err error
	}
	done := make(chan ended, 1)
	go func() {
		res, err := temporal.Result(ctx, run)
		done <- ended{res, err}
	}()
	for gen := 2; gen <= 6; gen++ {
		select {
		case <-arrived:
		case e := <-done:
			t.Fatalf("the run ended after %d lost workers: %v", gen-2, e.err)
		case <-ctx.Done():
			t.Fatalf("the model request did not reach worker %d", gen-1)
		}
		w.kill(t)
		w = startWorker(t, srv, model.URL(), "lost-model", record, "", gen)
	}
	e := <-done
	res, err := e.res, e.err
	if err != nil {
		t.Fatalf("the run failed after five lost workers: %v", err)
	}
	if res.Output != "Hello." || len(model.Requests()) != 6 {
		t.Errorf("answer %q after %d model requests, want Hello. after 6", res.Output, len(model.Requests()))
	}
	t.Logf("five lost workers during one model request: the run ended after %v", time.Since(start).Round(time.Millisecond))
	saveHistory(t, c, "lost-model", "model-lost-workers")
}

// TestChaosDeploy runs twenty runs, each a read and a write, on three
// worker processes, while five of them are SIGKILLed and one is stopped
// with SIGTERM, each replaced by a new one: no write runs twice, and every
// run ends with its answer.
func TestChaosDeploy(t *testing.T) {
	t.Parallel()
	const runs = 20
	var requests atomic.Int32
	reply := oniontest.Func(func(r oniontest.Request) oniontest.Step {
		requests.Add(1)
		if len(r.ToolResults()) > 0 {
			return oniontest.Text("done").Delay(100 * time.Millisecond)
		}
		return oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`), oniontest.Call("send", `{"To":"Ada"}`)).Delay(100 * time.Millisecond)
	})
	steps := make([]oniontest.Step, 10*runs)
	for i := range steps {
		steps[i] = reply
	}
	srv, model, c := crashSetup(t, steps...)
	model.KeepRequests(1)
	record := filepath.Join(t.TempDir(), "record")
	slow := envSlow + "=stock=300ms,send=300ms"
	gen := 0
	var live []*proc
	for range 3 {
		gen++
		live = append(live, spawnWorker(t, srv, model.URL(), "chaos", record, "", gen, slow))
	}
	for _, p := range live {
		p.expect(t, "ready")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()

	type ended struct {
		res *onion.Result
		err error
	}
	results := make(chan ended, runs)
	var wg sync.WaitGroup
	wg.Go(func() { // a run every 150 ms
		for i := range runs {
			run, err := startOnce(ctx, c, fmt.Sprintf("chaos-%d", i))
			if err != nil {
				results <- ended{err: err}
				continue
			}
			wg.Go(func() {
				res, err := temporal.Result(ctx, run)
				results <- ended{res, err}
			})
			time.Sleep(150 * time.Millisecond)
		}
	})
	// Every 800 ms the oldest worker goes, the third time with SIGTERM; a
	// new one takes its place.
	var stopTook time.Duration
	for i := range 6 {
		time.Sleep(800 * time.Millisecond)
		victim := live[0]
		live = live[1:]
		if i == 2 {
			stopTook = victim.stop(t)
		} else {
			victim.kill(t)
		}
		gen++
		live = append(live, spawnWorker(t, srv, model.URL(), "chaos", record, "", gen, slow))
	}
	wg.Wait()
	close(results)
	took := time.Since(start)

	outcomes := map[onion.Outcome]int{}
	finished := 0
	for r := range results {
		if r.err != nil {
			t.Errorf("run lost: %v", r.err)
			continue
		}
		if r.res.Output != "done" {
			t.Errorf("answer %q, want done", r.res.Output)
		}
		finished++
		for _, tc := range r.res.ToolCalls {
			outcomes[tc.Outcome]++
		}
	}
	perKey := map[string]int{}
	reads := 0
	for _, e := range records(t, record) {
		if e.tool == "stock" {
			reads++
			continue
		}
		if perKey[e.key]++; perKey[e.key] > 1 {
			t.Errorf("the write %s %s ran twice", e.tool, e.key)
		}
	}
	if finished != runs {
		t.Errorf("%d of %d runs finished", finished, runs)
	}
	t.Logf("chaos: %d runs in %v, 5 SIGKILLs and a SIGTERM (its stop took %v), %d worker processes: %d model requests (%d without losses), %d reads run (%d), %d writes run (%d), outcomes %v",
		finished, took.Round(time.Millisecond), stopTook.Round(time.Millisecond), gen, requests.Load(), 2*runs, reads, runs, len(perKey), runs, outcomes)
}

// startOnce starts the chaos run id. When the server is slow to answer,
// Start may give up on a run the server did start: the run is then picked
// up by its ID, and started again only when the server has none.
func startOnce(ctx context.Context, c client.Client, id string) (client.WorkflowRun, error) {
	for {
		run, err := temporal.Start(ctx, c, "chaos", testagent.Name, "Send the parcel to Ada",
			temporal.WorkflowID(id), temporal.HeartbeatTimeout(2*time.Second))
		if err == nil || ctx.Err() != nil {
			return run, err
		}
		if _, derr := c.DescribeWorkflowExecution(ctx, id, ""); derr == nil {
			return c.GetWorkflow(ctx, id, ""), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}
