package bench

import (
	"runtime"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/bench/internal/services"
)

// freshPerRun caps the never-derived types one run of the "first"
// sub-benchmark uses, so that -count 5 does not exhaust services.All.
const freshPerRun = 20

// nextFresh is the index in services.All of the next never-derived type.
var nextFresh = 1

// BenchmarkDerive measures turning a struct with ten documented methods
// into an agent's tools. "first" is the first time a type is seen: source
// facts, schemas and the tools are derived. "cached" is a second NewAgent
// with a type already seen, as when a program makes an agent per request.
//
// onion caches derivations per type for the life of the process, so a type
// can be "first" only once. The first sub-benchmark therefore times its
// first freshPerRun iterations on never-derived types by hand and reports
// those (ns/op, B/op and allocs/op are overridden); its other iterations
// redo a cached derivation only so that the harness's timing converges.
func BenchmarkDerive(b *testing.B) {
	// Parse the generated package's source once, outside any timing: a
	// program pays that once for all its tools.
	if len(services.All) == 0 {
		b.Skip("no generated types: run go generate in bench/ first (bench/run does)")
	}
	warm := services.All[0]
	if _, err := onion.NewAgent("warm", warm); err != nil {
		b.Fatal(err)
	}

	b.Run("first", func(b *testing.B) {
		var (
			took          time.Duration
			n             int
			bytes, allocs uint64
			before, after runtime.MemStats
		)
		for i := 0; i < b.N; i++ {
			if i < freshPerRun && nextFresh < len(services.All) {
				svc := services.All[nextFresh]
				nextFresh++
				runtime.ReadMemStats(&before)
				start := time.Now()
				a, err := onion.NewAgent("first", svc)
				took += time.Since(start)
				runtime.ReadMemStats(&after)
				if err != nil {
					b.Fatal(err)
				}
				if a.Tools().Len() != 10 {
					b.Fatalf("%d tools, want 10", a.Tools().Len())
				}
				bytes += after.TotalAlloc - before.TotalAlloc
				allocs += after.Mallocs - before.Mallocs
				n++
				continue
			}
			if _, err := onion.NewAgent("again", warm); err != nil {
				b.Fatal(err)
			}
		}
		if n == 0 {
			b.Skip("every generated type has been derived; run go generate with a larger -n")
		}
		b.ReportMetric(float64(took.Nanoseconds())/float64(n), "ns/op")
		b.ReportMetric(float64(bytes)/float64(n), "B/op")
		b.ReportMetric(float64(allocs)/float64(n), "allocs/op")
	})

	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a, err := onion.NewAgent("cached", warm)
			if err != nil {
				b.Fatal(err)
			}
			sink = a
		}
	})
}
