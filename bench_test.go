package onion_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/onionkit/onion"
)

// Four fields, as in the baseline the peers are measured against.
type benchArgs struct {
	Query  string  `json:"query"`
	Limit  int     `json:"limit"`
	Strict bool    `json:"strict"`
	Score  float64 `json:"score"`
}

type benchResult struct {
	Hits  int    `json:"hits"`
	Query string `json:"query"`
}

func benchSearch(a benchArgs) (benchResult, error) {
	return benchResult{Hits: a.Limit, Query: a.Query}, nil
}

// BenchSearch searches.
//
// query: what to find
// limit: how many
// strict: exact matches only
// score: the lowest score
func BenchSearch(query string, limit int, strict bool, score float64) (benchResult, error) {
	return benchResult{Hits: limit, Query: query}, nil
}

const benchJSON = `{"query":"golang tools","limit":10,"strict":true,"score":0.5}`

// BenchmarkCallBaseline is the hand-written equivalent: decode, call, encode.
func BenchmarkCallBaseline(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var a benchArgs
		if err := json.Unmarshal([]byte(benchJSON), &a); err != nil {
			b.Fatal(err)
		}
		r, err := benchSearch(a)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallStructArg(b *testing.B) {
	tool, err := onion.NewTool(benchSearch, onion.Name("search"))
	if err != nil {
		b.Fatal(err)
	}
	benchCall(b, tool)
}

func BenchmarkCallPositional(b *testing.B) {
	tool, err := onion.NewTool(BenchSearch)
	if err != nil {
		b.Fatal(err)
	}
	benchCall(b, tool)
}

func benchCall(b *testing.B, tool *onion.Tool) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(ctx, benchJSON); err != nil {
			b.Fatal(err)
		}
	}
}

// tenMethods has ten tools.
type tenMethods struct{}

// M0 is a tool.
func (tenMethods) M0(a benchArgs) error { return nil }

// M1 is a tool.
func (*tenMethods) M1(a benchArgs) error { return nil }

// M2 is a tool.
func (*tenMethods) M2(a benchArgs) error { return nil }

// M3 is a tool.
func (*tenMethods) M3(q string, n int) error { return nil }

// M4 is a tool.
func (*tenMethods) M4(q string, n int) error { return nil }

// M5 is a tool.
func (*tenMethods) M5(a Strictish) error { return nil }

// M6 is a tool.
func (*tenMethods) M6(a Order) error { return nil }

// M7 is a tool.
func (*tenMethods) M7() error { return nil }

// M8 is a tool.
func (*tenMethods) M8(x float64) error { return nil }

// M9 is a tool.
func (*tenMethods) M9(tags []string) error { return nil }

// BenchmarkToolsFromTenMethods measures deriving the tools of a struct with
// ten methods once the types' schemas are cached: what a second NewAgent
// with the same types costs.
func BenchmarkToolsFromTenMethods(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := onion.ToolsFrom(&tenMethods{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallTyped(b *testing.B) {
	tool, err := onion.NewTypedTool(func(_ context.Context, a benchArgs) (benchResult, error) { return benchSearch(a) }, onion.Name("search"))
	if err != nil {
		b.Fatal(err)
	}
	benchCall(b, tool)
}
