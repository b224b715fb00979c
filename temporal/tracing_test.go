package temporal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/telemetry"
)

// spanRecorder is a tracer provider that keeps the spans ended.
func spanRecorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, rec
}

// spanNamed is the one ended span called name.
func spanNamed(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q, want 1; spans: %v", len(found), name, names(spans))
	}
	return found[0]
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name()
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestDurableRunIsTracedAcrossActivities runs a durable run with a tool
// call under a caller's span: the workflow's invoke_agent is the caller's
// child, and the chat spans of the model activities and the execute_tool
// span of the call are its children, their parents read from the
// activities' Temporal headers (remote), the tool and its ApproveIf
// running in its call's span.
func TestDurableRunIsTracedAcrossActivities(t *testing.T) {
	tp, rec := spanRecorder(t)
	var mu sync.Mutex
	var toolSpan, approveSpan trace.SpanContext
	stock := newTool(t, func(ctx context.Context, _ struct{ SKU string }) (string, error) {
		mu.Lock()
		toolSpan = trace.SpanContextFromContext(ctx)
		mu.Unlock()
		return "12 in stock", nil
	}, onion.Name("stock"), onion.Description("Counts the stock."), onion.Read,
		onion.ApproveIf(func(ctx context.Context, _ onion.Call) (bool, error) {
			mu.Lock()
			approveSpan = trace.SpanContextFromContext(ctx)
			mu.Unlock()
			return false, nil
		}))
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("stock", `{"SKU":"a"}`), text("12 left")}}
	e := env(t, newAgent(t, m, stock, telemetry.Option(telemetry.TracerProvider(tp), telemetry.Provider("test"))))
	e.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&tracing{}}})

	ctx, caller := tp.Tracer("caller").Start(context.Background(), "caller")
	in := input("how many?")
	in.Trace = carrierOf(ctx)
	caller.End()
	if res := result(t, e, in); res.Output != "12 left" {
		t.Fatalf("output %q", res.Output)
	}

	spans := rec.Ended()
	if len(spans) != 5 {
		t.Fatalf("spans %v, want caller, invoke_agent, two chat and one execute_tool", names(spans))
	}
	run := spanNamed(t, spans, "invoke_agent shop")
	tool := spanNamed(t, spans, "execute_tool stock")
	if run.Parent().SpanID() != caller.SpanContext().SpanID() || !run.Parent().IsRemote() {
		t.Errorf("invoke_agent's parent %v, want the caller's span %v, read from the run's input", run.Parent(), caller.SpanContext())
	}
	for _, s := range spans {
		if s.SpanContext().TraceID() != caller.SpanContext().TraceID() {
			t.Errorf("%s is in trace %v, want the caller's %v", s.Name(), s.SpanContext().TraceID(), caller.SpanContext().TraceID())
		}
	}
	chats := 0
	for _, s := range spans {
		if !strings.HasPrefix(s.Name(), "chat") {
			continue
		}
		chats++
		if s.Parent().SpanID() != run.SpanContext().SpanID() || !s.Parent().IsRemote() {
			t.Errorf("chat's parent %v (remote %v), want invoke_agent %v from the activity's header",
				s.Parent().SpanID(), s.Parent().IsRemote(), run.SpanContext().SpanID())
		}
		if s.SpanKind() != trace.SpanKindClient || attr(s, "gen_ai.provider.name").AsString() != "test" {
			t.Errorf("chat: kind %v, provider %q: the run's attributes did not reach the activity", s.SpanKind(), attr(s, "gen_ai.provider.name").AsString())
		}
	}
	if chats != 2 {
		t.Errorf("%d chat spans, want one per model request (2); spans %v", chats, names(spans))
	}
	if tool.Parent().SpanID() != run.SpanContext().SpanID() {
		t.Errorf("execute_tool's parent %v, want invoke_agent %v", tool.Parent().SpanID(), run.SpanContext().SpanID())
	}
	if got := attr(tool, "gen_ai.tool.description").AsString(); got != "Counts the stock." {
		t.Errorf("execute_tool's description %q", got)
	}
	if got := attr(tool, "onion.tool.outcome").AsString(); got != "succeeded" {
		t.Errorf("execute_tool's outcome %q", got)
	}
	if got := attr(run, "onion.run.stop_reason").AsString(); got != "natural" {
		t.Errorf("invoke_agent's stop reason %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if toolSpan.SpanID() != tool.SpanContext().SpanID() || !toolSpan.IsRemote() {
		t.Errorf("the tool ran under %v (remote %v), want its execute_tool span %v from the activity's header",
			toolSpan.SpanID(), toolSpan.IsRemote(), tool.SpanContext().SpanID())
	}
	if approveSpan.SpanID() != tool.SpanContext().SpanID() {
		t.Errorf("ApproveIf ran under %v, want the call's execute_tool span %v", approveSpan.SpanID(), tool.SpanContext().SpanID())
	}
}

// TestReplayOfRecordedHistoriesStartsNoSpan replays the recorded runs with
// an agent that traces: a replay starts no span, and runs recorded before
// the trace context was in the headers replay as before.
func TestReplayOfRecordedHistoriesStartsNoSpan(t *testing.T) {
	files := recordedHistories(t)
	tp, rec := spanRecorder(t)
	agent := replayAgent(t, telemetry.Option(telemetry.TracerProvider(tp)))
	for _, f := range files {
		r, err := NewReplayer(replayLead(t, agent))
		if err != nil {
			t.Fatal(err)
		}
		if err := replay(r, f); err != nil {
			t.Fatalf("replay of %s: %v", f, err)
		}
	}
	if spans := rec.Ended(); len(spans) != 0 {
		t.Errorf("replays ended spans %v, want none", names(spans))
	}
	if spans := rec.Started(); len(spans) != 0 {
		t.Errorf("replays started %d spans, want none", len(spans))
	}
}

// tracedEnv is a test environment of agent a with the worker's tracing
// interceptor, and the input of a run under a caller's span.
func tracedEnv(t *testing.T, a *onion.Agent, tp trace.TracerProvider, prompt string, opts ...StartOption) (*testsuite.TestWorkflowEnvironment, runInput, trace.SpanContext) {
	t.Helper()
	e := env(t, a)
	e.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&tracing{}}})
	ctx, caller := tp.Tracer("caller").Start(context.Background(), "caller")
	caller.End()
	in := input(prompt, opts...)
	in.Trace = carrierOf(ctx)
	return e, in, caller.SpanContext()
}

// TestDurableModelRetryIsAChatSpanPerAttempt: Temporal retries the model
// activity, and each attempt is its own chat span under the run's, the
// failed one with its error.type.
func TestDurableModelRetryIsAChatSpanPerAttempt(t *testing.T) {
	tp, rec := spanRecorder(t)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		failure(&onion.ModelError{StatusCode: 503, Retryable: true, Err: errors.New("busy")}), text("ok"),
	}}
	a := newAgent(t, m, telemetry.Option(telemetry.TracerProvider(tp)), onion.RetryBackoff(time.Millisecond, time.Millisecond))
	e, in, _ := tracedEnv(t, a, tp, "hi")
	if res := result(t, e, in); res.Output != "ok" {
		t.Fatalf("output %q", res.Output)
	}
	spans := rec.Ended()
	run := spanNamed(t, spans, "invoke_agent shop")
	var errs []string
	for _, s := range spans {
		if !strings.HasPrefix(s.Name(), "chat") {
			continue
		}
		if s.Parent().SpanID() != run.SpanContext().SpanID() {
			t.Errorf("a chat span's parent %v, want invoke_agent", s.Parent().SpanID())
		}
		errs = append(errs, attr(s, "error.type").AsString())
	}
	if len(errs) != 2 || errs[0] != "503" || errs[1] != "" {
		t.Errorf("chat spans' error.type %q, want 503 then none", errs)
	}
}

// TestContinueAsNewKeepsTheCallersTrace: the workflow run that continues
// as new ends its invoke_agent, and the next one's is again the caller's
// child.
func TestContinueAsNewKeepsTheCallersTrace(t *testing.T) {
	tp, rec := spanRecorder(t)
	stock := newTool(t, func(struct{}) (string, error) { return "3", nil }, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		calls("stock", `{}`), calls("stock", `{}`), text("3 left"),
	}}
	a := newAgent(t, m, stock, telemetry.Option(telemetry.TracerProvider(tp)))
	e, in, caller := tracedEnv(t, a, tp, "how many?", HistoryBudget(5, 1<<30))
	e.SetCurrentHistoryLength(20)
	e.ExecuteWorkflow(WorkflowName, in)
	var can *workflow.ContinueAsNewError
	if err := e.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow error %v, want continue-as-new", err)
	}
	var next runInput
	if err := converterGet(can, &next); err != nil {
		t.Fatal(err)
	}
	next.Settings.HistoryEvents = 10_000
	e2 := env(t, a)
	e2.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&tracing{}}})
	if res := result(t, e2, next); res.Output != "3 left" {
		t.Fatalf("output %q", res.Output)
	}
	var runs []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if strings.HasPrefix(s.Name(), "invoke_agent") {
			runs = append(runs, s)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("%d invoke_agent spans, want one a workflow run", len(runs))
	}
	for _, s := range runs {
		if s.Parent().SpanID() != caller.SpanID() || s.SpanContext().TraceID() != caller.TraceID() {
			t.Errorf("invoke_agent's parent %v, want the caller's span", s.Parent().SpanID())
		}
	}
}
