package devserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/telemetry"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// envTrace is the file a worker process writes its spans to, one JSON
// object a span, as each ends.
const envTrace = "ONION_TEST_TRACE"

// traceTo is the telemetry of a worker process that writes its spans to
// the file path as they end, so that they are there when it is killed.
func traceTo(path string) (onion.Option, error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	exp, err := stdouttrace.New(stdouttrace.WithWriter(f))
	if err != nil {
		return nil, err
	}
	return telemetry.Option(telemetry.TracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))), nil
}

// exported is a span as the stdout exporter writes it.
type exported struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct {
		TraceID, SpanID string
		Remote          bool
	}
}

func readSpans(t *testing.T, path string) []exported {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []exported
	for d := json.NewDecoder(f); ; {
		var s exported
		if err := d.Decode(&s); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, s)
	}
}

func byName(spans []exported, prefix string) []exported {
	var out []exported
	for _, s := range spans {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// TestTraceOfARunOnTheServer runs a durable run on the embedded server
// under a caller's span, with a worker whose agent traces: the spans make
// the caller → invoke_agent → chat, execute_tool tree in the caller's
// trace. Then the worker replays the finished run to answer a query, and
// a replayer replays its history: neither starts a span. The worker is
// given an interceptor of its own too: both it and onion's see the
// activities.
func TestTraceOfARunOnTheServer(t *testing.T) {
	_, model, c := crashSetup(t, oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)), oniontest.Text("A1 is in stock."))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	var toolSpan trace.SpanContext
	mine := &counting{}
	wo := worker.Options{Identity: "traced-worker", Interceptors: []interceptor.WorkerInterceptor{mine}}
	agent := serveAgentWith(t, c, model, "traced", wo, func(ctx context.Context, tool string) (string, error) {
		toolSpan = trace.SpanContextFromContext(ctx)
		return tool + " done", nil
	}, telemetry.Option(telemetry.TracerProvider(tp)))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx, caller := tp.Tracer("caller").Start(ctx, "caller")
	res, err := temporal.Run(ctx, c, "traced", testagent.Name, "Is A1 in stock?")
	caller.End()
	if err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	got := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		got[strings.Fields(s.Name())[0]] = append(got[strings.Fields(s.Name())[0]], s)
		if s.SpanContext().TraceID() != caller.SpanContext().TraceID() {
			t.Errorf("%s is in trace %v, want the caller's", s.Name(), s.SpanContext().TraceID())
		}
	}
	if len(got["invoke_agent"]) != 1 || len(got["chat"]) != 2 || len(got["execute_tool"]) != 1 {
		t.Fatalf("spans %v, want one invoke_agent, two chat, one execute_tool", got)
	}
	run, tool := got["invoke_agent"][0], got["execute_tool"][0]
	if run.Parent().SpanID() != caller.SpanContext().SpanID() {
		t.Errorf("invoke_agent's parent %v, want the caller's span", run.Parent().SpanID())
	}
	for _, s := range append(got["chat"], tool) {
		if s.Parent().SpanID() != run.SpanContext().SpanID() {
			t.Errorf("%s's parent %v, want invoke_agent %v", s.Name(), s.Parent().SpanID(), run.SpanContext().SpanID())
		}
	}
	if toolSpan.SpanID() != tool.SpanContext().SpanID() || !toolSpan.IsRemote() {
		t.Errorf("the tool ran under %v, want execute_tool %v read from its activity's header", toolSpan.SpanID(), tool.SpanContext().SpanID())
	}
	if len(res.ToolCalls) != 1 {
		t.Fatalf("calls %+v", res.ToolCalls)
	}
	if n := mine.activities.Load(); n != 3 {
		t.Errorf("the worker's own interceptor saw %d activities, want 3 (two model requests and a call)", n)
	}

	// A query of a finished run the worker no longer holds is answered by
	// replaying its whole history.
	started := len(rec.Started())
	worker.PurgeStickyWorkflowCache()
	msgs, err := temporal.Conversation(ctx, c, res.RunID)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("conversation %v, %v", msgs, err)
	}
	if n := len(rec.Started()) - started; n != 0 {
		t.Errorf("the worker's replay started %d spans, want none", n)
	}

	// And so does a replayer given the run's history.
	h := fetchHistory(ctx, t, c, res.RunID)
	r, err := temporal.NewReplayer(agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ReplayWorkflowHistory(quiet{}, h); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if n := len(rec.Started()) - started; n != 0 {
		t.Errorf("the replays started %d spans, want none", n)
	}
}

// TestTraceCrossesWorkerProcesses kills the worker process in the middle
// of a read and lets a second one finish the run, each writing its spans
// to its own file: every span is in the caller's trace, the parents come
// through Temporal's headers, and the second worker, which replays what
// the first did, starts one invoke_agent (where its replay ends, under
// the caller's span) and no second span of the first model request.
func TestTraceCrossesWorkerProcesses(t *testing.T) {
	srv, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)),
		oniontest.Text("A1 is in stock."),
	)
	dir := t.TempDir()
	record := filepath.Join(dir, "record")
	trace1, trace2 := filepath.Join(dir, "trace1"), filepath.Join(dir, "trace2")
	t.Setenv(envTrace, trace1)
	first := startWorker(t, srv, model.URL(), "trace-crash", record, "stock", 1)

	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ctx, caller := tp.Tracer("caller").Start(ctx, "caller")
	run, err := temporal.Start(ctx, c, "trace-crash", testagent.Name, "Is A1 in stock?",
		temporal.WorkflowID("trace-crash"), temporal.HeartbeatTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	first.expect(t, "started stock")
	first.kill(t)
	t.Setenv(envTrace, trace2)
	startWorker(t, srv, model.URL(), "trace-crash", record, "stock", 2)
	if _, err := temporal.Result(ctx, run); err != nil {
		t.Fatal(err)
	}
	caller.End()

	traceID, callerID := caller.SpanContext().TraceID().String(), caller.SpanContext().SpanID().String()
	one, two := readSpans(t, trace1), readSpans(t, trace2)
	for _, s := range append(one, two...) {
		if s.SpanContext.TraceID != traceID {
			t.Errorf("%s is in trace %s, want the caller's %s", s.Name, s.SpanContext.TraceID, traceID)
		}
	}
	// The first worker ended only its model request: its run and its call
	// died with it.
	if len(one) != 1 || !strings.HasPrefix(one[0].Name, "chat") || !one[0].Parent.Remote {
		t.Fatalf("the first worker's spans %+v, want its chat span, its parent from the activity's header", one)
	}
	runs, chats, tools := byName(two, "invoke_agent"), byName(two, "chat"), byName(two, "execute_tool")
	if len(runs) != 1 || len(chats) != 1 || len(tools) != 1 || len(two) != 3 {
		t.Fatalf("the second worker's spans %+v, want one invoke_agent, one chat (the second request), one execute_tool", two)
	}
	if runs[0].Parent.SpanID != callerID || !runs[0].Parent.Remote {
		t.Errorf("the second worker's invoke_agent has parent %+v, want the caller's span %s from the run's input", runs[0].Parent, callerID)
	}
	for _, s := range []exported{chats[0], tools[0]} {
		if s.Parent.SpanID != runs[0].SpanContext.SpanID {
			t.Errorf("%s's parent %s, want the second worker's invoke_agent %s", s.Name, s.Parent.SpanID, runs[0].SpanContext.SpanID)
		}
	}
	if !chats[0].Parent.Remote {
		t.Error("the second chat's parent did not come through the activity's header")
	}
}

// counting is a worker interceptor of the program's own: it counts the
// activities it sees.
type counting struct {
	interceptor.WorkerInterceptorBase
	activities atomic.Int32
}

func (c *counting) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &countingActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, n: &c.activities}
}

type countingActivity struct {
	interceptor.ActivityInboundInterceptorBase
	n *atomic.Int32
}

func (a *countingActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	a.n.Add(1)
	return a.Next.ExecuteActivity(ctx, in)
}
