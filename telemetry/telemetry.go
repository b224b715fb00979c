package telemetry

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/onionkit/onion"
)

// Option has an agent trace and measure its runs: pass it to
// onion.NewAgent. Without settings it uses the global tracer and meter
// providers (otel.GetTracerProvider, otel.GetMeterProvider) and records no
// content.
func Option(opts ...Setting) onion.Option {
	s := settings{}
	for _, o := range opts {
		o(&s)
	}
	if s.tp == nil {
		s.tp = otel.GetTracerProvider()
	}
	if s.mp == nil {
		s.mp = otel.GetMeterProvider()
	}
	return onion.WithInstrument(newInstrument(s))
}

// A Setting configures Option.
type Setting func(*settings)

type settings struct {
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	content  bool
	provider string
}

// TracerProvider sets where the spans go (default the global provider).
func TracerProvider(tp trace.TracerProvider) Setting {
	return func(s *settings) { s.tp = tp }
}

// MeterProvider sets where the measurements go (default the global
// provider).
func MeterProvider(mp metric.MeterProvider) Setting {
	return func(s *settings) { s.mp = mp }
}

// CaptureContent records content on the spans: the instructions, the
// messages sent and received, the tool definitions, the arguments and
// results of tool calls. It is off by default, since content may hold
// what should not leave the process.
func CaptureContent(on bool) Setting {
	return func(s *settings) { s.content = on }
}

// Provider names the provider (gen_ai.provider.name, such as "anthropic"
// or "ollama") of an agent whose model is a LanguageModel given with
// onion.WithModel; the built-in client is "openai".
func Provider(name string) Setting {
	return func(s *settings) { s.provider = name }
}
