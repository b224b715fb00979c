package bench

import (
	"context"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/telemetry"
)

// BenchmarkTelemetry measures what package telemetry adds to one run of
// BenchmarkLoop's agent (two model requests, one tool call, against
// oniontest on loopback): off is the agent without it; noop is the agent
// with telemetry.Option on no-op tracer and meter providers, the cost a
// program pays with telemetry compiled in and no SDK installed; recorded
// has the SDK record every span in memory, for scale.
func BenchmarkTelemetry(b *testing.B) {
	for _, c := range telemetryCases {
		b.Run(c.name, func(b *testing.B) {
			s := oniontest.NewServer(b)
			items := append([]any{BookFlight, onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.SystemPrompt("You book flights.")}, c.opts(b)...)
			runs(b, items, func() { script(s) })
		})
	}
}

// BenchmarkTelemetryLoopOnly is BenchmarkTelemetry with a model that is a
// Go func (the same two replies, no HTTP), so that what telemetry adds is
// measured against the loop's own work alone.
func BenchmarkTelemetryLoopOnly(b *testing.B) {
	reply := []*onion.Response{
		{Message: onion.Message{Role: onion.RoleAssistant, ToolCalls: []onion.ToolRequest{{ID: "call_1", Name: "book_flight", Arguments: FlightJSON}}},
			FinishReason: "tool_calls"},
		{Message: onion.Message{Role: onion.RoleAssistant, Content: "Booked."}, FinishReason: "stop"},
	}
	for _, c := range telemetryCases {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			model := onion.ModelFunc(func(context.Context, *onion.Request, func(onion.Delta)) (*onion.Response, error) {
				r := *reply[n%2]
				n++
				return &r, nil
			})
			items := append([]any{BookFlight, onion.WithModel(model), onion.SystemPrompt("You book flights.")}, c.opts(b)...)
			runs(b, items, func() {})
		})
	}
}

// telemetryCases are the agents BenchmarkTelemetry compares.
var telemetryCases = []struct {
	name string
	opts func(b *testing.B) []any
}{
	{"off", func(*testing.B) []any { return nil }},
	{"noop", func(*testing.B) []any {
		return []any{telemetry.Option(telemetry.TracerProvider(tracenoop.NewTracerProvider()),
			telemetry.MeterProvider(metricnoop.NewMeterProvider()))}
	}},
	{"recorded", func(b *testing.B) []any {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		return []any{telemetry.Option(telemetry.TracerProvider(tp), telemetry.MeterProvider(metricnoop.NewMeterProvider()))}
	}},
}

// runs runs the agent of items once per op, script first.
func runs(b *testing.B, items []any, script func()) {
	agent, err := onion.NewAgent("bench", items...)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		script()
		b.StartTimer()
		res, err := agent.Run(ctx, loopPrompt)
		if err != nil {
			b.Fatal(err)
		}
		sink = res.Output
	}
}
