package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/telemetry"
)

const secretKey = "sk-test-never-in-a-span-4242"

// rig is a tracer and a meter provider that record in memory.
type rig struct {
	rec    *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{rec: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.rec))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	return r
}

func (r *rig) option(content bool) onion.Option {
	return telemetry.Option(telemetry.TracerProvider(r.tp), telemetry.MeterProvider(r.mp), telemetry.CaptureContent(content))
}

// onionSpans are the ended spans of onion's scope, by name.
func (r *rig) onionSpans() map[string]sdktrace.ReadOnlySpan {
	out := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range r.rec.Ended() {
		if s.InstrumentationScope().Name == "github.com/onionkit/onion/telemetry" {
			out[s.Name()] = s
		}
	}
	return out
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// world is an agent with a read tool that calls an HTTP server through
// otelhttp, a write that needs approval (denied) and a read that fails,
// scripted to fail its first model request once (retried), call all three
// tools, then answer.
type world struct {
	rig   *rig
	model *oniontest.Server
	agent *onion.Agent
	http  *httptest.Server
}

func newWorld(t *testing.T, content bool) *world {
	t.Helper()
	w := &world{rig: newRig(t)}
	prop := propagation.TraceContext{}
	w.http = httptest.NewServer(otelhttp.NewHandler(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(rw, "12 degrees")
	}), "GET /weather", otelhttp.WithTracerProvider(w.rig.tp), otelhttp.WithPropagators(prop)))
	t.Cleanup(w.http.Close)
	client := &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport,
		otelhttp.WithTracerProvider(w.rig.tp), otelhttp.WithPropagators(prop))}
	fetch, err := onion.NewTool(func(ctx context.Context, a struct {
		City string `json:"city"`
	}) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.http.URL+"/weather?city="+a.City, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}, onion.Name("weather"), onion.Description("Weather in a city."), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	pay, err := onion.NewTool(func(context.Context, struct{}) error { return nil },
		onion.Name("pay"), onion.Description("Pays."), onion.Write, onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	broken, err := onion.NewTool(func(context.Context, struct{}) (string, error) { return "", errors.New("disk on fire") },
		onion.Name("broken"), onion.Description("Always fails."), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	w.model = oniontest.NewServer(t,
		oniontest.Error(500, `{"error":{"message":"try again","type":"server_error"}}`),
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`), oniontest.Call("broken", `{}`),
			oniontest.Call("pay", `{}`)).WithUsage(30, 7),
		oniontest.Text("It is 12 degrees in Paris.").WithUsage(50, 9),
	)
	w.agent, err = onion.NewAgent("weatherbot", fetch, pay, broken, w.rig.option(content),
		onion.BaseURL(w.model.URL()), onion.APIKey(secretKey), onion.Model("gpt-test"),
		onion.SystemPrompt("Be brief."), onion.RetryBackoff(0, 0),
		onion.Approver(func(context.Context, onion.Call) (bool, error) { return false, nil }))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// run runs the world's agent under a caller's span.
func (w *world) run(t *testing.T) (trace.SpanContext, *onion.Result) {
	t.Helper()
	ctx, caller := w.rig.tp.Tracer("caller").Start(context.Background(), "caller")
	res, err := w.agent.Run(ctx, "Weather in Paris?")
	caller.End()
	if err != nil {
		t.Fatal(err)
	}
	return caller.SpanContext(), res
}

func TestSpansTree(t *testing.T) {
	w := newWorld(t, false)
	caller, _ := w.run(t)
	spans := w.rig.onionSpans()
	want := map[string]trace.SpanKind{
		"invoke_agent weatherbot": trace.SpanKindInternal,
		"chat gpt-test":           trace.SpanKindClient,
		"execute_tool weather":    trace.SpanKindInternal,
		"execute_tool pay":        trace.SpanKindInternal,
		"execute_tool broken":     trace.SpanKindInternal,
	}
	for name, kind := range want {
		s, ok := spans[name]
		if !ok {
			t.Fatalf("no span %q among %v", name, spans)
		}
		if s.SpanKind() != kind {
			t.Errorf("%s: kind %v, want %v", name, s.SpanKind(), kind)
		}
	}
	var chats int
	for _, s := range w.rig.rec.Ended() {
		if s.Name() == "chat gpt-test" {
			chats++
		}
	}
	if chats != 2 {
		t.Errorf("%d chat spans, want 2 (one per model request, the retry an event)", chats)
	}
	agent := spans["invoke_agent weatherbot"]
	if agent.Parent().SpanID() != caller.SpanID() || agent.SpanContext().TraceID() != caller.TraceID() {
		t.Errorf("invoke_agent's parent is %v, want the caller's span %v", agent.Parent().SpanID(), caller.SpanID())
	}
	for _, s := range w.rig.rec.Ended() {
		if strings.HasPrefix(s.Name(), "chat ") || strings.HasPrefix(s.Name(), "execute_tool ") {
			if s.Parent().SpanID() != agent.SpanContext().SpanID() {
				t.Errorf("%s: parent %v, want invoke_agent %v", s.Name(), s.Parent().SpanID(), agent.SpanContext().SpanID())
			}
		}
	}
	// The HTTP client span made inside the tool is the tool span's child,
	// and the server's span the client's.
	tool := spans["execute_tool weather"]
	var client, server sdktrace.ReadOnlySpan
	for _, s := range w.rig.rec.Ended() {
		switch s.SpanKind() {
		case trace.SpanKindClient:
			if !strings.HasPrefix(s.Name(), "chat ") {
				client = s
			}
		case trace.SpanKindServer:
			server = s
		}
	}
	if client == nil || client.Parent().SpanID() != tool.SpanContext().SpanID() {
		t.Fatalf("the HTTP client span %v is not a child of execute_tool %v", client, tool.SpanContext().SpanID())
	}
	if server == nil || server.Parent().SpanID() != client.SpanContext().SpanID() {
		t.Errorf("the HTTP server span is not a child of the client span")
	}
}

func TestSpanAttributes(t *testing.T) {
	w := newWorld(t, false)
	_, res := w.run(t)
	spans := w.rig.onionSpans()
	host := strings.TrimPrefix(w.model.URL(), "http://")
	host = host[:strings.IndexByte(host, ':')]

	agent := attrs(spans["invoke_agent weatherbot"])
	for k, v := range map[attribute.Key]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weatherbot", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "gpt-test", "server.address": host, "onion.run.stop_reason": "natural", "onion.run.id": res.RunID,
	} {
		if got := agent[k].String(); got != v {
			t.Errorf("invoke_agent %s = %q, want %q", k, got, v)
		}
	}
	if agent["gen_ai.usage.input_tokens"].AsInt64() != 80 || agent["gen_ai.usage.output_tokens"].AsInt64() != 16 {
		t.Errorf("invoke_agent usage = %v/%v, want the run's 80/16", agent["gen_ai.usage.input_tokens"], agent["gen_ai.usage.output_tokens"])
	}

	// The first chat span: retried once, then tool calls.
	var first, last sdktrace.ReadOnlySpan
	for _, s := range w.rig.rec.Ended() {
		if s.Name() == "chat gpt-test" {
			if first == nil {
				first = s
			} else {
				last = s
			}
		}
	}
	chat := attrs(first)
	for k, v := range map[attribute.Key]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test",
		"server.address": host, "gen_ai.response.finish_reasons": `["tool_calls"]`,
	} {
		if got := chat[k].String(); got != v {
			t.Errorf("chat %s = %q, want %q", k, got, v)
		}
	}
	for _, k := range []attribute.Key{"gen_ai.response.id", "gen_ai.response.model", "server.port"} {
		if _, ok := chat[k]; !ok {
			t.Errorf("chat has no %s", k)
		}
	}
	if chat["gen_ai.usage.input_tokens"].AsInt64() != 30 || chat["gen_ai.usage.output_tokens"].AsInt64() != 7 {
		t.Errorf("chat usage = %v/%v, want 30/7", chat["gen_ai.usage.input_tokens"], chat["gen_ai.usage.output_tokens"])
	}
	if ev := first.Events(); len(ev) != 1 || ev[0].Name != "onion.model.retry" {
		t.Errorf("first chat events = %+v, want one onion.model.retry", ev)
	} else {
		e := map[attribute.Key]attribute.Value{}
		for _, kv := range ev[0].Attributes {
			e[kv.Key] = kv.Value
		}
		if e["error.type"].String() != "500" || e["onion.retry.attempt"].AsInt64() != 1 {
			t.Errorf("retry event attributes = %v", ev[0].Attributes)
		}
	}
	if len(last.Events()) != 0 || first.Status().Code == codes.Error {
		t.Errorf("a request that succeeded after a retry is not an error: %v, events %v", first.Status(), last.Events())
	}

	cases := map[string]map[attribute.Key]string{
		"execute_tool weather": {"onion.tool.outcome": "succeeded", "onion.tool.intent": "read", "onion.tool.attempts": "1",
			"gen_ai.tool.description": "Weather in a city."},
		"execute_tool broken": {"onion.tool.outcome": "failed", "error.type": "failed", "onion.tool.attempts": "1",
			"gen_ai.tool.description": "Always fails."},
		"execute_tool pay": {"onion.tool.outcome": "denied", "onion.tool.intent": "write", "onion.tool.attempts": "0",
			"gen_ai.tool.description": "Pays."},
	}
	byName := map[string]onion.ToolCall{}
	for _, c := range res.ToolCalls {
		byName[c.Name] = c
	}
	for name, want := range cases {
		s := spans[name]
		got := attrs(s)
		tool := strings.TrimPrefix(name, "execute_tool ")
		want["gen_ai.operation.name"] = "execute_tool"
		want["gen_ai.tool.name"] = tool
		want["gen_ai.tool.type"] = "function"
		want["gen_ai.tool.call.id"] = byName[tool].ID
		for k, v := range want {
			if got[k].String() != v {
				t.Errorf("%s %s = %q, want %q", name, k, got[k].String(), v)
			}
		}
		if _, ok := got["error.type"]; ok != (tool == "broken") {
			t.Errorf("%s: error.type present = %v", name, ok)
		}
		if (s.Status().Code == codes.Error) != (tool == "broken") {
			t.Errorf("%s: status %v", name, s.Status())
		}
	}
	if st := spans["execute_tool broken"].Status(); !strings.Contains(st.Description, "disk on fire") {
		t.Errorf("the failed tool's status %q does not say why", st.Description)
	}
}

var contentKeys = []attribute.Key{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
	"gen_ai.tool.definitions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}

func TestContentOffByDefault(t *testing.T) {
	w := newWorld(t, false)
	w.run(t)
	for _, s := range w.rig.onionSpans() {
		for _, k := range contentKeys {
			if _, ok := attrs(s)[k]; ok {
				t.Errorf("%s has %s without CaptureContent", s.Name(), k)
			}
		}
	}
}

func TestContentCaptured(t *testing.T) {
	w := newWorld(t, true)
	w.run(t)
	spans := w.rig.onionSpans()
	contains := func(span string, k attribute.Key, want string) {
		t.Helper()
		if got := attrs(spans[span])[k].String(); !strings.Contains(got, want) {
			t.Errorf("%s %s = %q, want it to hold %q", span, k, got, want)
		}
	}
	contains("invoke_agent weatherbot", "gen_ai.system_instructions", `"content":"Be brief.`)
	contains("invoke_agent weatherbot", "gen_ai.input.messages", `"content":"Weather in Paris?"`)
	contains("invoke_agent weatherbot", "gen_ai.output.messages", "It is 12 degrees in Paris.")
	contains("invoke_agent weatherbot", "gen_ai.tool.definitions", `"name":"weather"`)
	// The last chat span sent the tool results and got the answer.
	contains("chat gpt-test", "gen_ai.input.messages", `"type":"tool_call_response"`)
	contains("chat gpt-test", "gen_ai.input.messages", "12 degrees")
	contains("chat gpt-test", "gen_ai.output.messages", `"finish_reason":"stop"`)
	contains("chat gpt-test", "gen_ai.tool.definitions", `"description":"Pays."`)
	contains("execute_tool weather", "gen_ai.tool.call.arguments", `{"city":"Paris"}`)
	contains("execute_tool weather", "gen_ai.tool.call.result", "12 degrees")
}

func TestAPIKeyNeverRecorded(t *testing.T) {
	w := newWorld(t, true)
	w.run(t)
	for _, s := range w.rig.rec.Ended() {
		kvs := s.Attributes()
		for _, e := range s.Events() {
			kvs = append(kvs, e.Attributes...)
		}
		for _, kv := range kvs {
			if strings.Contains(kv.Value.String(), secretKey) {
				t.Errorf("%s: %s holds the API key", s.Name(), kv.Key)
			}
		}
		if strings.Contains(s.Status().Description, secretKey) {
			t.Errorf("%s: the status holds the API key", s.Name())
		}
	}
}

func TestNoSpanAfterRun(t *testing.T) {
	w := newWorld(t, true)
	w.run(t)
	count := func(spans []sdktrace.ReadOnlySpan) int {
		n := 0
		for _, s := range spans {
			if s.InstrumentationScope().Name == "github.com/onionkit/onion/telemetry" {
				n++
			}
		}
		return n
	}
	// invoke_agent, two chats, three tools.
	if started, ended := count(readOnly(w.rig.rec.Started())), count(w.rig.rec.Ended()); started != 6 || ended != 6 {
		t.Errorf("after Run: %d of onion's spans started, %d ended, want 6 and 6", started, ended)
	}
	for _, s := range w.rig.rec.Started() {
		if s.InstrumentationScope().Name == "github.com/onionkit/onion/telemetry" && s.EndTime().IsZero() {
			t.Errorf("%s was still open when Run returned", s.Name())
		}
	}
}

func TestModelFailsForGood(t *testing.T) {
	r := newRig(t)
	s := oniontest.NewServer(t, oniontest.Error(503, `{"error":{"message":"down"}}`), oniontest.Error(503, `{"error":{"message":"down"}}`))
	a, err := onion.NewAgent("bot", r.option(false), onion.BaseURL(s.URL()), onion.APIKey(secretKey),
		onion.Model("gpt-test"), onion.Retries(1), onion.RetryBackoff(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "hi"); err == nil {
		t.Fatal("the run did not fail")
	}
	spans := r.onionSpans()
	chat, agent := spans["chat gpt-test"], spans["invoke_agent bot"]
	if chat == nil || agent == nil {
		t.Fatalf("spans: %v", spans)
	}
	if attrs(chat)["error.type"].String() != "503" || chat.Status().Code != codes.Error {
		t.Errorf("chat: error.type %q, status %v", attrs(chat)["error.type"].String(), chat.Status())
	}
	if attrs(agent)["onion.run.stop_reason"].String() != "failed" || agent.Status().Code != codes.Error {
		t.Errorf("invoke_agent: stop reason %q, status %v", attrs(agent)["onion.run.stop_reason"].String(), agent.Status())
	}
	if _, ok := attrs(agent)["error.type"]; !ok {
		t.Error("invoke_agent of a failed run has no error.type")
	}
}

func TestMetrics(t *testing.T) {
	w := newWorld(t, false)
	w.run(t)
	var rm metricdata.ResourceMetrics
	if err := w.rig.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			found[m.Name] = m
		}
	}
	tokens, ok := found["gen_ai.client.token.usage"].Data.(metricdata.Histogram[int64])
	if !ok {
		t.Fatalf("no gen_ai.client.token.usage histogram among %v", found)
	}
	sums := map[string]int64{}
	for _, dp := range tokens.DataPoints {
		v, _ := dp.Attributes.Value("gen_ai.token.type")
		sums[v.AsString()] += dp.Sum
		if op, _ := dp.Attributes.Value("gen_ai.operation.name"); op.AsString() != "chat" {
			t.Errorf("token usage with operation %q", op.AsString())
		}
	}
	if sums["input"] != 80 || sums["output"] != 16 {
		t.Errorf("token usage by type = %v, want input 80, output 16", sums)
	}
	if found["gen_ai.client.token.usage"].Unit != "{token}" {
		t.Errorf("token usage unit %q", found["gen_ai.client.token.usage"].Unit)
	}
	dur, ok := found["gen_ai.client.operation.duration"].Data.(metricdata.Histogram[float64])
	if !ok || found["gen_ai.client.operation.duration"].Unit != "s" {
		t.Fatalf("no gen_ai.client.operation.duration histogram in seconds among %v", found)
	}
	var n uint64
	for _, dp := range dur.DataPoints {
		n += dp.Count
	}
	if n != 2 {
		t.Errorf("operation.duration counted %d requests, want 2", n)
	}
	calls, ok := found["onion.tool.calls"].Data.(metricdata.Sum[int64])
	if !ok || !calls.IsMonotonic {
		t.Fatalf("no onion.tool.calls counter among %v", found)
	}
	byOutcome := map[string]int64{}
	for _, dp := range calls.DataPoints {
		o, _ := dp.Attributes.Value("onion.tool.outcome")
		tool, _ := dp.Attributes.Value("gen_ai.tool.name")
		byOutcome[tool.AsString()+"/"+o.AsString()] += dp.Value
	}
	want := map[string]int64{"weather/succeeded": 1, "broken/failed": 1, "pay/denied": 1}
	for k, v := range want {
		if byOutcome[k] != v {
			t.Errorf("tool calls %s = %d, want %d (all: %v)", k, byOutcome[k], v, byOutcome)
		}
	}
}

func readOnly(spans []sdktrace.ReadWriteSpan) []sdktrace.ReadOnlySpan {
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		out[i] = s
	}
	return out
}

func TestUnknownToolHasASpan(t *testing.T) {
	r := newRig(t)
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("nope", `{}`)), oniontest.Text("Sorry."))
	a, err := onion.NewAgent("bot", Weather, r.option(false), onion.BaseURL(s.URL()), onion.APIKey(secretKey), onion.Model("gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	span := r.onionSpans()["execute_tool nope"]
	if span == nil {
		t.Fatalf("no span for a call of an unknown tool among %v", r.onionSpans())
	}
	if got := attrs(span); got["onion.tool.outcome"].String() != "failed" || got["onion.tool.attempts"].AsInt64() != 0 {
		t.Errorf("attributes %v", span.Attributes())
	}
	if span.Parent().SpanID() != r.onionSpans()["invoke_agent bot"].SpanContext().SpanID() {
		t.Error("the unknown tool's span is not a child of invoke_agent")
	}
}

func TestCanceledRunLeavesNoSpanOpen(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	wait, err := onion.NewTool(func(ctx context.Context, _ struct{}) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}, onion.Name("wait"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("wait", `{}`), oniontest.Call("wait", `{}`)))
	a, err := onion.NewAgent("bot", wait, r.option(true), onion.BaseURL(s.URL()), onion.APIKey(secretKey), onion.Model("gpt-test"), onion.MaxParallel(1))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-started
		cancel()
	}()
	if _, err := a.Run(ctx, "hi"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want canceled", err)
	}
	var tools int
	for _, s := range r.rec.Started() {
		if s.EndTime().IsZero() {
			t.Errorf("%s is still open after Run returned", s.Name())
		}
		if s.Name() == "execute_tool wait" {
			tools++
		}
	}
	if tools != 2 {
		t.Errorf("%d execute_tool spans, want 2 (the cut call and the skipped one)", tools)
	}
	agent := r.onionSpans()["invoke_agent bot"]
	if agent == nil || attrs(agent)["onion.run.stop_reason"].String() != "canceled" || attrs(agent)["error.type"].String() != "canceled" {
		t.Errorf("invoke_agent of a canceled run: %v", agent)
	}
	outcomes := map[string]bool{}
	for _, s := range r.rec.Ended() {
		if s.Name() == "execute_tool wait" {
			outcomes[attrs(s)["onion.tool.outcome"].String()] = true
		}
	}
	if !outcomes["failed"] || !outcomes["skipped"] {
		t.Errorf("outcomes of the calls: %v, want failed (the cut read) and skipped", outcomes)
	}
}

func TestGlobalProvidersByDefault(t *testing.T) {
	r := newRig(t)
	oldTP, oldMP := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(r.tp)
	otel.SetMeterProvider(r.mp)
	t.Cleanup(func() { otel.SetTracerProvider(oldTP); otel.SetMeterProvider(oldMP) })
	s := oniontest.NewServer(t, oniontest.Text("Hello.").WithUsage(3, 2))
	a, err := onion.NewAgent("bot", telemetry.Option(), onion.BaseURL(s.URL()), onion.APIKey(secretKey), onion.Model("gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	if spans := r.onionSpans(); spans["invoke_agent bot"] == nil || spans["chat gpt-test"] == nil {
		t.Errorf("the global tracer provider got %v", spans)
	}
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) == 0 {
		t.Error("the global meter provider got no measurement")
	}
}
