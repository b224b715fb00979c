package devserver_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/devserver"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// BenchmarkDurableStep measures one tool round (a model request that
// calls the stock read, the call, and a model request that answers) as a
// durable run on the embedded server, start to result, against the same
// run of the same agent live, in the same loop: each iteration runs it
// once each way. It reports the median wall time of each, the CPU time
// of the whole process (server, worker and client are all in it) per run
// of each, and their ratios; ns/op is all the runs of an iteration
// together. "activities" runs each step as an activity, as runs do by
// default; "local" starts the runs with LocalSteps.
//
// Two peers run in the same loop on the same server and client, written
// with Temporal's SDK alone: a workflow of the same shape, whose three
// steps (activities, or local activities) do nothing, and an empty
// workflow. They give what Temporal itself spends on such a run, the
// floor no durable step on it goes under: temporal-cpu-ms/run and
// empty-cpu-ms/run, and onion-over-temporal-x-live, the CPU the durable
// run spends beyond the peer, in runs of the live agent.
//
//	go test -run '^$' -bench DurableStep -benchtime 200x ./temporal/devserver
func BenchmarkDurableStep(b *testing.B) {
	srv, err := devserver.Start(context.Background(), devserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			b.Errorf("stop: %v", err)
		}
	})
	model := oniontest.NewServer(b)
	model.KeepRequests(4)
	c, err := client.Dial(dialOptions(srv.HostPort()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	agent := serveAgent(b, c, model, "step", func(ctx context.Context, tool string) (string, error) { return tool + " done", nil })
	w := worker.New(c, "peer", worker.Options{})
	w.RegisterWorkflow(peerRound)
	w.RegisterActivity(peerStep)
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	for _, bc := range []struct {
		name  string
		opts  []temporal.StartOption
		local bool
	}{{"activities", nil, false}, {"local", []temporal.StartOption{temporal.LocalSteps()}, true}} {
		b.Run(bc.name, func(b *testing.B) { benchStep(b, c, model, agent, bc.name, bc.opts, bc.local) })
	}
}

// peerRound is BenchmarkDurableStep's peer: a workflow with steps steps
// (activities, or local ones) that do nothing, the shape of a tool round.
func peerRound(ctx workflow.Context, steps int, local bool) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	out := ""
	for range steps {
		f := workflow.ExecuteActivity
		if local {
			f = workflow.ExecuteLocalActivity
		}
		if err := f(ctx, peerStep, "step").Get(ctx, &out); err != nil {
			return "", err
		}
	}
	return out, nil
}

// peerStep is a step of peerRound.
func peerStep(_ context.Context, s string) (string, error) { return s, nil }

// benchStep is BenchmarkDurableStep's runs, started with opts.
func benchStep(b *testing.B, c client.Client, model *oniontest.Server, agent *onion.Agent, name string, opts []temporal.StartOption, local bool) {
	ctx := context.Background()
	round := func() {
		model.Add(oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)), oniontest.Text("12 in stock."))
	}
	durable := func(i int) {
		round()
		id := fmt.Sprintf("step-%s-%d-%d", name, b.N, i)
		run, err := temporal.Start(ctx, c, "step", testagent.Name, "How many A1?", append(opts, temporal.WorkflowID(id))...)
		if err != nil {
			b.Fatal(err)
		}
		res, err := temporal.Result(ctx, run)
		if err != nil || res.Output != "12 in stock." || len(res.ToolCalls) != 1 {
			b.Fatalf("durable run: %v, %+v", err, res)
		}
	}
	peer := func(steps int) func(int) {
		return func(int) {
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "peer", EnableEagerStart: true}, peerRound, steps, local)
			if err != nil {
				b.Fatal(err)
			}
			var out string
			if err := run.Get(ctx, &out); err != nil || out != map[bool]string{true: "step", false: ""}[steps > 0] {
				b.Fatalf("peer run: %v, %q", err, out)
			}
		}
	}
	shaped, empty := peer(3), peer(0)
	live := func(int) {
		round()
		res, err := agent.Run(ctx, "How many A1?")
		if err != nil || res.Output != "12 in stock." || len(res.ToolCalls) != 1 {
			b.Fatalf("live run: %v, %+v", err, res)
		}
	}
	// One of each first, outside the figures: the first run of a queue
	// and the first HTTP connections cost what no later run does.
	durable(-1)
	shaped(-1)
	empty(-1)
	live(-1)
	var dWall, lWall, pWall, eWall []time.Duration
	var dCPU, lCPU, pCPU, eCPU time.Duration
	timed := func(f func(int), i int, wall *[]time.Duration, cpu *time.Duration) {
		c0, t0 := cpuTime(), time.Now()
		f(i)
		*wall = append(*wall, time.Since(t0))
		*cpu += cpuTime() - c0
	}
	// ONION_STEP_ONLY runs one kind of run in the loop, for the callgrind
	// script next to this file, which counts instructions per run.
	only := os.Getenv("ONION_STEP_ONLY")
	kinds := []struct {
		name string
		run  func(int)
		wall *[]time.Duration
		cpu  *time.Duration
	}{{"durable", durable, &dWall, &dCPU}, {"temporal", shaped, &pWall, &pCPU}, {"empty", empty, &eWall, &eCPU}, {"live", live, &lWall, &lCPU}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, k := range kinds {
			if only == "" || only == k.name {
				timed(k.run, i, k.wall, k.cpu)
			}
		}
	}
	if only != "" {
		return
	}
	b.StopTimer()
	dMed, lMed := median(dWall), median(lWall)
	n := float64(b.N)
	b.ReportMetric(float64(dMed.Microseconds())/1000, "durable-median-ms")
	b.ReportMetric(float64(slices.Max(dWall).Microseconds())/1000, "durable-max-ms")
	b.ReportMetric(float64(lMed.Microseconds())/1000, "live-median-ms")
	b.ReportMetric(dCPU.Seconds()*1000/n, "durable-cpu-ms/run")
	b.ReportMetric(lCPU.Seconds()*1000/n, "live-cpu-ms/run")
	b.ReportMetric(float64(dCPU)/float64(max(lCPU, 1)), "cpu-x-live")
	b.ReportMetric(float64(dMed)/float64(max(lMed, 1)), "wall-x-live")
	b.ReportMetric(float64(median(pWall).Microseconds())/1000, "temporal-median-ms")
	b.ReportMetric(pCPU.Seconds()*1000/n, "temporal-cpu-ms/run")
	b.ReportMetric(float64(pCPU)/float64(max(lCPU, 1)), "temporal-cpu-x-live")
	b.ReportMetric(eCPU.Seconds()*1000/n, "empty-cpu-ms/run")
	b.ReportMetric(float64(eCPU)/float64(max(lCPU, 1)), "empty-cpu-x-live")
	b.ReportMetric(float64(dCPU-pCPU)/float64(max(lCPU, 1)), "onion-over-temporal-x-live")
}

// cpuTime is the CPU time, user and system, the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// median is the middle of ds (the upper middle of an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
