// Command tracing runs an agent with OpenTelemetry tracing and prints its
// spans: each as JSON, from the SDK's stdout exporter, then the run as a
// tree. Point it at a model with OPENAI_API_KEY, or at a local
// OpenAI-compatible server with OPENAI_BASE_URL (and ONION_MODEL); without
// either it exits with status 1 and says so.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/telemetry"
)

// Weather reports the weather in a city.
//
// city: the city, e.g. Paris
//
//onion:intent read
func Weather(ctx context.Context, city string) (string, error) {
	// The tool's ctx holds its execute_tool span: a span started here (or
	// by an otelhttp client) is its child.
	_, span := trace.SpanFromContext(ctx).TracerProvider().Tracer("weather").Start(ctx, "lookup "+city)
	defer span.End()
	return "sunny in " + city, nil
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// snippet:tracing
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(out), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tree := &treeRecorder{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter), sdktrace.WithSpanProcessor(tree))
	defer tp.Shutdown(context.Background())

	agent, err := onion.NewAgent("assistant", Weather, telemetry.Option(telemetry.TracerProvider(tp)))
	if err != nil {
		return err
	}
	// The caller's span is the parent of the run's.
	ctx, span := tp.Tracer("tracing-example").Start(ctx, "handle request")
	answer, err := agent.Input(ctx, "What's the weather in Paris?")
	span.End()
	// end snippet:tracing
	if err != nil {
		return err
	}
	fmt.Fprintln(out, answer)
	fmt.Fprintln(out)
	tree.print(out)
	return nil
}

// treeRecorder is a span processor that keeps the ended spans, to print
// them as a tree.
type treeRecorder struct {
	mu    sync.Mutex // guards spans
	spans []sdktrace.ReadOnlySpan
}

func (t *treeRecorder) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (t *treeRecorder) Shutdown(context.Context) error                  { return nil }
func (t *treeRecorder) ForceFlush(context.Context) error                { return nil }
func (t *treeRecorder) OnEnd(s sdktrace.ReadOnlySpan) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spans = append(t.spans, s)
}

// print writes the spans as a tree, children in the order they started,
// each with its kind, duration and a few attributes.
func (t *treeRecorder) print(out io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	ids := map[trace.SpanID]bool{}
	for _, s := range t.spans {
		ids[s.SpanContext().SpanID()] = true
	}
	for _, s := range t.spans {
		p := s.Parent().SpanID()
		if !ids[p] {
			p = trace.SpanID{} // a root
		}
		children[p] = append(children[p], s)
	}
	var walk func(id trace.SpanID, indent string)
	walk = func(id trace.SpanID, indent string) {
		kids := children[id]
		slices.SortFunc(kids, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
		for _, s := range kids {
			fmt.Fprintf(out, "%s%s  [%s, %v]%s\n", indent, s.Name(), s.SpanKind(),
				s.EndTime().Sub(s.StartTime()).Round(time.Microsecond), summary(s.Attributes()))
			walk(s.SpanContext().SpanID(), indent+"  ")
		}
	}
	walk(trace.SpanID{}, "")
}

// summary is a few telling attributes of a span.
func summary(attrs []attribute.KeyValue) string {
	var b strings.Builder
	for _, kv := range attrs {
		switch kv.Key {
		case telemetry.InputTokens, telemetry.OutputTokens, telemetry.ResponseFinish, telemetry.ToolOutcome, telemetry.RunStopReason:
			fmt.Fprintf(&b, " %s=%s", kv.Key, kv.Value.String())
		}
	}
	return b.String()
}
