package bench

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// sink keeps results alive so that the compiler cannot drop the work.
var sink any

// BenchmarkStructTool calls a tool whose argument is a struct of four
// fields: the model's JSON in, the text the model reads out.
func BenchmarkStructTool(b *testing.B) {
	calls, err := StructToolCalls()
	if err != nil {
		b.Fatal(err)
	}
	benchCalls(b, calls)
}

// BenchmarkPositionalTool calls a tool of two positional parameters. Only
// onion takes them: the others get AddArgs.
func BenchmarkPositionalTool(b *testing.B) {
	calls, err := PositionalToolCalls()
	if err != nil {
		b.Fatal(err)
	}
	benchCalls(b, calls)
}

func benchCalls(b *testing.B, calls []ToolCall) {
	ctx := context.Background()
	for _, c := range calls {
		b.Run(c.Name, func(b *testing.B) {
			if _, err := c.Call(ctx, c.Args); err != nil { // compile what is compiled on first use
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				out, err := c.Call(ctx, c.Args)
				if err != nil {
					b.Fatal(err)
				}
				sink = out
			}
		})
	}
}

// BenchmarkToolCallsSideBySide calls each framework's tool in turn, a
// hundred calls at a time, so that all of them run under the same load,
// and reports each one's time a call with its ratio to the baseline and
// to Eino, measured in the same run: on a shared machine time moves
// between runs, the ratios much less. (./callgrind counts instructions,
// which do not move at all.)
func BenchmarkToolCallsSideBySide(b *testing.B) {
	for _, g := range []struct {
		name  string
		calls func() ([]ToolCall, error)
	}{{"StructTool", StructToolCalls}, {"PositionalTool", PositionalToolCalls}} {
		b.Run(g.name, func(b *testing.B) {
			calls, err := g.calls()
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			spent := make([]time.Duration, len(calls))
			for b.Loop() {
				for i, c := range calls {
					start := time.Now()
					for range 100 {
						out, err := c.Call(ctx, c.Args)
						if err != nil {
							b.Fatal(err)
						}
						sink = out
					}
					spent[i] += time.Since(start)
				}
			}
			at := map[string]time.Duration{}
			for i, c := range calls {
				at[c.Name] = spent[i]
			}
			for i, c := range calls {
				b.ReportMetric(float64(spent[i])/float64(100*b.N), c.Name+"-ns/call")
				for _, base := range []string{"baseline", "eino"} {
					if c.Name != base {
						b.ReportMetric(float64(spent[i])/float64(at[base]), c.Name+"/"+base)
					}
				}
			}
		})
	}
}

// TestToolCalls checks that every framework's call gives the model the
// same result, and says which of them refuse arguments out of the schema:
// onion's three calls and ADK check them, the others do not.
func TestToolCalls(t *testing.T) {
	ctx := context.Background()
	checks := map[string]bool{"onion": true, "onion_generated": true, "onion_typed": true, "adk": true}
	for _, set := range []struct {
		name  string
		calls func() ([]ToolCall, error)
		want  any
		bad   []string
	}{
		{"book_flight", StructToolCalls, Booking{Ref: "LISOSL2026-12-24", Seats: 2, Price: 199}, []string{
			`{"from":"LIS","to":"OSL","date":"2026-12-24","seats":20}`, // above the maximum
			`{"from":"LIS","to":"OSL","seats":2}`,                      // date missing
		}},
		{"add", PositionalToolCalls, 3.75, []string{`{"a":1.5}`}},
	} {
		calls, err := set.calls()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			out, err := c.Call(ctx, c.Args)
			if err != nil {
				t.Fatalf("%s/%s: %v", set.name, c.Name, err)
			}
			var wrapped struct{ Result json.RawMessage }
			if c.Name == "adk" && json.Unmarshal([]byte(out), &wrapped) == nil && wrapped.Result != nil {
				out = string(wrapped.Result) // ADK wraps a result that is not an object
			}
			got := reflect.New(reflect.TypeOf(set.want))
			if err := json.Unmarshal([]byte(out), got.Interface()); err != nil {
				t.Fatalf("%s/%s: result %s: %v", set.name, c.Name, out, err)
			}
			if !reflect.DeepEqual(got.Elem().Interface(), set.want) {
				t.Errorf("%s/%s = %s, want %v", set.name, c.Name, out, set.want)
			}
			for _, bad := range set.bad {
				_, err := c.Call(ctx, bad)
				if refused := err != nil; refused != checks[c.Name] && c.Name != "baseline" {
					t.Errorf("%s/%s(%s): refused %v, want %v (err %v)", set.name, c.Name, bad, refused, checks[c.Name], err)
				}
			}
		}
	}
}
