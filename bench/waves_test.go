package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// The shape of BenchmarkSharedAgentWaves: waves of runs at once on one
// agent, one after the other. ONION_BENCH_WAVE_RUNS sets the runs of a
// wave, for a quicker look.
const (
	waveRuns = 10000
	waves    = 5
)

// BenchmarkSharedAgentWaves starts waves of 10,000 runs at once on one
// shared Agent, five waves in a row, each run three rounds of two lookup
// reads then an answer, against one oniontest server that keeps no
// requests: a server whose users share one agent. One op is the five
// waves. It reports the runs per second of the first and of the last
// wave and their ratio (goal: the last within 10 % of the first), the
// bytes allocated per run in the first and in the last wave (goal: flat),
// the peak RSS of the process per run in flight (goal: at most 100 KB;
// the server's memory counts too, as it is in the same process), and the
// goroutines left once the runs are done and onion.CloseIdleConnections
// has closed the pool's idle connections (goal: none).
//
// Run it alone: go test -run '^$' -bench SharedAgentWaves -benchtime 1x.
func BenchmarkSharedAgentWaves(b *testing.B) {
	runs := waveRuns
	if v, err := strconv.Atoi(os.Getenv("ONION_BENCH_WAVE_RUNS")); err == nil && v > 0 {
		runs = v
	}
	ctx := context.Background()
	s := oniontest.NewServer(b).KeepRequests(0)
	tool, err := onion.NewTool(Lookup, onion.Read)
	if err != nil {
		b.Fatal(err)
	}
	reply := oniontest.Func(func(r oniontest.Request) oniontest.Step {
		if len(r.ToolResults()) == roundsPerRun*callsPerRound {
			return oniontest.Text("Both records are there.")
		}
		return oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`), oniontest.Call("lookup", `{"key":"b"}`))
	})
	before := goleak.IgnoreCurrent()
	goroutines := runtime.NumGoroutine()
	agent, err := onion.NewAgent("shared", tool, onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		b.Fatal(err)
	}
	defer agent.Close()
	resetPeakRSS()

	var rate, perRun [waves]float64
	for b.Loop() {
		for w := range waves {
			b.StopTimer()
			for range runs * (roundsPerRun + 1) {
				s.Add(reply)
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			b.StartTimer()
			start := time.Now()
			var g errgroup.Group
			for range runs {
				g.Go(func() error {
					res, err := agent.Run(ctx, "Look up a and b, three times.")
					if err == nil && (res.Iterations != roundsPerRun || len(res.ToolCalls) != roundsPerRun*callsPerRound) {
						err = fmt.Errorf("%d rounds, %d tool calls", res.Iterations, len(res.ToolCalls))
					}
					return err
				})
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			b.StopTimer()
			runtime.ReadMemStats(&m1)
			rate[w] = float64(runs) / took.Seconds()
			perRun[w] = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(runs)
			b.StartTimer()
		}
	}
	b.StopTimer()
	b.ReportMetric(rate[0], "runs/s-first")
	b.ReportMetric(rate[waves-1], "runs/s-last")
	b.ReportMetric(rate[waves-1]/rate[0], "last/first")
	b.ReportMetric(perRun[0], "B/run-first")
	b.ReportMetric(perRun[waves-1], "B/run-last")
	if peak := peakRSS(); peak > 0 {
		b.ReportMetric(float64(peak)/float64(runs), "peak-RSS-B/run")
	}
	onion.CloseIdleConnections()
	err = goleak.Find(before)
	b.ReportMetric(float64(max(runtime.NumGoroutine()-goroutines, 0)), "goroutines-left")
	if err != nil {
		b.Errorf("goroutines left after the runs: %v", err)
	}
}

// resetPeakRSS resets the process's peak RSS (VmHWM), where Linux allows
// it, so that the peak measured is the benchmark's.
func resetPeakRSS() {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // best effort
}

// peakRSS is the process's peak resident set in bytes (VmHWM), 0 where
// /proc does not say.
func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(status) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
