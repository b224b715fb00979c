package main

import (
	"strings"
	"testing"
)

const input = `goos: linux
goarch: amd64
pkg: github.com/onionkit/onion/bench
cpu: AMD EPYC
BenchmarkTool/baseline-2   	  433580	      2000 ns/op	     500 B/op	      10 allocs/op
BenchmarkTool/onion-2      	  433580	      1000 ns/op	     250 B/op	       5 allocs/op
BenchmarkTool/baseline-2   	  433580	      3000 ns/op	     500 B/op	      10 allocs/op
BenchmarkTool/onion-2      	  433580	      9000 ns/op	     250 B/op	       5 allocs/op
BenchmarkTool/baseline-2   	  433580	      2500 ns/op	     500 B/op	      10 allocs/op
BenchmarkTool/onion-2      	  433580	      1250 ns/op	     250 B/op	       5 allocs/op
BenchmarkRounds/sequential-2 	  1000	   9000000 ns/op	  142902 B/op	    1389 allocs/op
BenchmarkRounds/parallel-2   	  1000	   6000000 ns/op	  142902 B/op	    1389 allocs/op
BenchmarkDerive/first-2      	    5000	    742548.4 ns/op	    258884 B/op	      1244 allocs/op
--- FAIL: BenchmarkBroken
PASS
ok  	github.com/onionkit/onion/bench	3.105s
`

func TestTable(t *testing.T) {
	env, benches, err := parse(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(env, ", "); got != "linux/amd64, AMD EPYC" {
		t.Errorf("env = %q", got)
	}
	var b strings.Builder
	write(&b, benches)
	want := `| benchmark | runs | ns/op | B/op | allocs/op | time | bytes | allocs |
|---|---:|---:|---:|---:|---:|---:|---:|
| Tool/baseline | 3 | 2 500 | 500 | 10 | 1.00 | 1.00 | 1.00 |
| Tool/onion | 3 | 1 250 | 250 | 5 | 0.50 | 0.50 | 0.50 |
| Rounds/sequential | 1 | 9 000 000 | 142 902 | 1 389 | 1.00 | 1.00 | 1.00 |
| Rounds/parallel | 1 | 6 000 000 | 142 902 | 1 389 | 0.67 | 1.00 | 1.00 |
| Derive/first | 1 | 742 548 | 258 884 | 1 244 | 1.00 | 1.00 | 1.00 |
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got, _ := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if _, ok := median(nil); ok {
		t.Error("median(nil) reports a value")
	}
}
