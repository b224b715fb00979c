package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/onionkit/onion"
)

const (
	flightJSON = `{"from":"LIS","to":"OSL","date":"2026-12-24","seats":2}`
	addJSON    = `{"a":1.5,"b":2.25}`
)

// sink keeps results alive so that the compiler cannot drop the work.
var sink any

// BenchmarkStructTool calls a tool whose argument is a struct of four
// fields: the model's JSON in, the text the model reads out.
func BenchmarkStructTool(b *testing.B) {
	ctx := context.Background()
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var args FlightArgs
			if err := json.Unmarshal([]byte(flightJSON), &args); err != nil {
				b.Fatal(err)
			}
			res, err := BookFlight(ctx, args)
			if err != nil {
				b.Fatal(err)
			}
			out, err := json.Marshal(res)
			if err != nil {
				b.Fatal(err)
			}
			sink = string(out)
		}
	})
	b.Run("onion", func(b *testing.B) {
		tool, err := onion.NewTool(BookFlight)
		if err != nil {
			b.Fatal(err)
		}
		callOnion(b, tool, flightJSON)
	})
	b.Run("onion_typed", func(b *testing.B) {
		// The same func through onion.NewTypedTool: no reflection per call.
		tool, err := onion.NewTypedTool(BookFlight)
		if err != nil {
			b.Fatal(err)
		}
		callOnion(b, tool, flightJSON)
	})
	b.Run("eino", func(b *testing.B) {
		tool, err := utils.InferTool("book_flight", "Books seats on a flight.", BookFlight)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			out, err := tool.InvokableRun(ctx, flightJSON)
			if err != nil {
				b.Fatal(err)
			}
			sink = out
		}
	})
}

// BenchmarkPositionalTool calls a tool of two positional parameters. Eino
// takes only a struct argument, so it gets AddArgs.
func BenchmarkPositionalTool(b *testing.B) {
	ctx := context.Background()
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var args AddArgs
			if err := json.Unmarshal([]byte(addJSON), &args); err != nil {
				b.Fatal(err)
			}
			out, err := json.Marshal(Add(args.A, args.B))
			if err != nil {
				b.Fatal(err)
			}
			sink = string(out)
		}
	})
	b.Run("onion", func(b *testing.B) {
		tool, err := onion.NewTool(Add)
		if err != nil {
			b.Fatal(err)
		}
		callOnion(b, tool, addJSON)
	})
	b.Run("eino", func(b *testing.B) {
		tool, err := utils.InferTool("add", "Returns the sum of two numbers.",
			func(ctx context.Context, args AddArgs) (float64, error) { return Add(args.A, args.B), nil })
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			out, err := tool.InvokableRun(ctx, addJSON)
			if err != nil {
				b.Fatal(err)
			}
			sink = out
		}
	})
}

func callOnion(b *testing.B, tool *onion.Tool, args string) {
	b.Helper()
	ctx := context.Background()
	if _, err := tool.Call(ctx, args); err != nil { // compile the validator before timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := tool.Call(ctx, args)
		if err != nil {
			b.Fatal(err)
		}
		sink = out
	}
}
