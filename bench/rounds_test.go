package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// lookupWork is what one lookup call costs: small, fixed, and spent
// waiting, as a tool waiting on a service does, so that calls running in
// parallel overlap.
const lookupWork = time.Millisecond

// Lookup returns the record stored under key.
//
// key: the record's key
func Lookup(ctx context.Context, key string) (string, error) {
	t := time.NewTimer(lookupWork)
	defer t.Stop()
	select {
	case <-t.C:
		return "record " + key, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// roundsPerRun and callsPerRound shape one run of BenchmarkRounds.
const (
	roundsPerRun  = 3
	callsPerRound = 2
)

// BenchmarkRounds measures one agent run of three tool rounds against an
// oniontest server on loopback: in each round the model asks for two
// lookup calls, then it answers, so a run is four model requests and six
// calls of a tool that waits lookupWork. "sequential" declares the tool
// onion.Write, so the two calls of a round run one at a time; "parallel"
// declares it onion.Read, so they run at once. The difference is what
// running reads in parallel saves: ideally one lookupWork per round.
//
// One op is one run. The agent's conversation is reset between runs,
// outside the timing, so that history does not grow. Run it with
// -benchtime 1000x for 1,000 runs.
func BenchmarkRounds(b *testing.B) {
	for _, c := range []struct {
		name   string
		intent onion.Intent
	}{
		{"sequential", onion.Write},
		{"parallel", onion.Read},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchRounds(b, c.intent)
		})
	}
}

func benchRounds(b *testing.B, intent onion.Intent) {
	ctx := context.Background()
	s := oniontest.NewServer(b)
	tool, err := onion.NewTool(Lookup, intent)
	if err != nil {
		b.Fatal(err)
	}
	agent, err := onion.NewAgent("bench", tool, onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		b.Fatal(err)
	}
	defer agent.Close()
	round := oniontest.ToolCalls(
		oniontest.Call("lookup", `{"key":"a"}`),
		oniontest.Call("lookup", `{"key":"b"}`),
	)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for range roundsPerRun {
			s.Add(round)
		}
		s.Add(oniontest.Text("Both records are there."))
		b.StartTimer()
		res, err := agent.Run(ctx, "Look up a and b, three times.")
		if err != nil {
			b.Fatal(err)
		}
		if res.Iterations != roundsPerRun || len(res.ToolCalls) != roundsPerRun*callsPerRound {
			b.Fatalf("%d rounds, %d tool calls", res.Iterations, len(res.ToolCalls))
		}
		for _, tc := range res.ToolCalls {
			if tc.Outcome != onion.Succeeded {
				b.Fatalf("tool call: %+v", tc)
			}
		}
		sink = res.Output
	}
}

// concurrentRuns is how many runs BenchmarkConcurrentRuns starts at once.
const concurrentRuns = 1000

// BenchmarkConcurrentRuns starts 1,000 runs at once on one Agent, each of
// three rounds of two reads then an answer (4,000 model requests to one
// oniontest server, 6,000 calls), and waits for all. One op is the 1,000
// runs; allocs/run is what one run costs. When they are done no goroutine
// of theirs is left.
func BenchmarkConcurrentRuns(b *testing.B) {
	ctx := context.Background()
	s := oniontest.NewServer(b)
	tool, err := onion.NewTool(Lookup, onion.Read)
	if err != nil {
		b.Fatal(err)
	}
	agent, err := onion.NewAgent("bench", tool, onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		b.Fatal(err)
	}
	defer agent.Close()
	// Each reply is chosen by how far its run has got: the runs share the
	// server's script, in no particular order.
	reply := oniontest.Func(func(r oniontest.Request) oniontest.Step {
		if len(r.ToolResults()) == roundsPerRun*callsPerRound {
			return oniontest.Text("Both records are there.")
		}
		return oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`), oniontest.Call("lookup", `{"key":"b"}`))
	})
	before := goleak.IgnoreCurrent()
	var m0, m1 runtime.MemStats
	var allocs uint64
	for b.Loop() {
		b.StopTimer()
		for range concurrentRuns * (roundsPerRun + 1) {
			s.Add(reply)
		}
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		var g errgroup.Group
		for range concurrentRuns {
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
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		allocs += m1.Mallocs - m0.Mallocs
		b.StartTimer()
	}
	b.ReportMetric(float64(allocs)/float64(b.N*concurrentRuns), "allocs/run")
	s.Close()
	if err := goleak.Find(before); err != nil {
		b.Errorf("goroutines left after the runs: %v", err)
	}
}
