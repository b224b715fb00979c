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
	ctx := context.Background()
	cases := []struct {
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
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := oniontest.NewServer(b)
			items := append([]any{BookFlight, onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.SystemPrompt("You book flights.")}, c.opts(b)...)
			agent, err := onion.NewAgent("bench", items...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				script(s)
				agent.Reset()
				b.StartTimer()
				res, err := agent.Run(ctx, loopPrompt)
				if err != nil {
					b.Fatal(err)
				}
				sink = res.Output
			}
		})
	}
}
