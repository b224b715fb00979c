package temporal

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/telemetry"
)

// leadAndReader is a lead agent whose tool is the agent reader, which
// reads stock; each with its own scripted model.
func leadAndReader(t *testing.T, lead, reader *scripted, readerOpts ...any) *onion.Agent {
	t.Helper()
	stock := newTool(t, func(context.Context) (string, error) { return "12", nil }, onion.Name("stock"), onion.Description("Counts."), onion.Read)
	r, err := onion.NewAgent("reader", append([]any{onion.WithModel(reader), stock, onion.Description("Reads the stock.")}, readerOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	l, err := onion.NewAgent("lead", onion.WithModel(lead), r)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSubAgentIsAChildWorkflow: a call of an agent given as a tool runs as
// a child workflow of the run, with the task as its prompt, an ID made
// like an idempotency key and the path of agents; its answer is the
// call's output, and its usage is the run's, broken down by agent.
func TestSubAgentIsAChildWorkflow(t *testing.T) {
	lead := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		withUsage(calls("reader", `{"task":"count A1"}`), 10, 1), withUsage(text("There are 12."), 20, 2)}}
	reader := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		withUsage(calls("stock", `{}`), 100, 10), withUsage(text("12 left"), 200, 20)}}
	e := env(t, leadAndReader(t, lead, reader))
	var child *workflow.Info
	var childIn runInput
	e.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, args converter.EncodedValues) {
		child = info
		if err := args.Get(&childIn); err != nil {
			t.Error(err)
		}
	})
	in := input("how many A1?")
	in.Agent = "lead"
	res := result(t, e, in)
	if res.Output != "There are 12." || outcomes(res) != "reader:succeeded" || res.Calls[0].Output != "12 left" {
		t.Fatalf("answer %q, calls %s %+v", res.Output, outcomes(res), res.Calls)
	}
	if child == nil || !strings.HasPrefix(child.WorkflowExecution.ID, "wf-1/") || !strings.Contains(child.WorkflowExecution.ID, "/tool/1/") {
		t.Errorf("child workflow %+v", child)
	}
	if childIn.Agent != "reader" || childIn.Prompt != "count A1" || !slices.Equal(childIn.Path, []string{"lead"}) {
		t.Errorf("child input %+v", childIn)
	}
	want := map[string]loop.Usage{
		"lead":        {PromptTokens: 30, CompletionTokens: 3, TotalTokens: 33, Requests: 2},
		"lead/reader": {PromptTokens: 300, CompletionTokens: 30, TotalTokens: 330, Requests: 2},
	}
	if !maps.Equal(res.ByAgent, want) || res.Usage.TotalTokens != 363 || res.Usage.Requests != 4 {
		t.Errorf("usage %+v by agent %+v", res.Usage, res.ByAgent)
	}
	if got := reader.sent(); len(got) != 2 || got[0].Messages[len(got[0].Messages)-1].Content != "count A1" {
		t.Errorf("the reader was sent %d requests", len(got))
	}
}

// TestSubAgentStoppedFailsTheCall: a sub-run that stops without an answer
// fails the call with the reason, and the lead goes on.
func TestSubAgentStoppedFailsTheCall(t *testing.T) {
	lead := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		calls("reader", `{"task":"count A1"}`), text("The reader failed.")}}
	reader := &scripted{} // no reply: its model fails at once
	e := env(t, leadAndReader(t, lead, reader, onion.Retries(0)))
	in := input("how many A1?")
	in.Agent = "lead"
	res := result(t, e, in)
	if res.Output != "The reader failed." || outcomes(res) != "reader:failed" || !strings.Contains(res.Calls[0].Error, "agent reader stopped (failed)") {
		t.Fatalf("answer %q, calls %+v", res.Output, res.Calls)
	}
	// Arguments without a task never start a run.
	lead = &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("reader", `{"task":""}`), text("no task")}}
	e = env(t, leadAndReader(t, lead, &scripted{}))
	in = input("how many A1?")
	in.Agent = "lead"
	if res := result(t, e, in); outcomes(res) != "reader:failed" || !strings.Contains(res.Calls[0].Error, "the task is empty") {
		t.Errorf("calls %+v", res.Calls)
	}
}

// StockQuery asks for the stock of one SKU.
type StockQuery struct {
	// SKU is the article, such as A1.
	SKU string `json:"sku" jsonschema:"pattern=^[A-Z][0-9]+$"`
}

// StockCount is the stock of one SKU.
type StockCount struct {
	SKU   string `json:"sku"`
	Count int    `json:"count"`
}

// TestTypedSubAgentAsAChildWorkflow: a sub-agent built with InputType and
// OutputType runs as a child workflow whose prompt is the task's JSON and
// whose answer is held to the answer's type (its AnswerSpec in the
// child's input); the lead reads the answer's JSON, and arguments that do
// not fit start no child.
func TestTypedSubAgentAsAChildWorkflow(t *testing.T) {
	lead := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		calls("reader", `{"sku":"a1"}`), calls("reader", `{"sku": "A1"}`), text("There are 12.")}}
	reader := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text(`{"sku":"A1","count":12}`)}}
	e := env(t, leadAndReader(t, lead, reader, onion.InputType[StockQuery](), onion.OutputType[StockCount]()))
	var inputs []runInput
	e.SetOnChildWorkflowStartedListener(func(_ *workflow.Info, _ workflow.Context, args converter.EncodedValues) {
		var in runInput
		if err := args.Get(&in); err != nil {
			t.Error(err)
		}
		inputs = append(inputs, in)
	})
	in := input("how many A1?")
	in.Agent = "lead"
	res := result(t, e, in)
	if res.Output != "There are 12." || outcomes(res) != "reader:failed reader:succeeded" ||
		!strings.Contains(res.Calls[0].Error, "sku") || res.Calls[1].Output != `{"sku":"A1","count":12}` {
		t.Fatalf("answer %q, calls %+v", res.Output, res.Calls)
	}
	if len(inputs) != 1 || inputs[0].Prompt != `{"sku":"A1"}` || inputs[0].Answer == nil || inputs[0].Answer.Format.Name != "stock_count" {
		t.Errorf("child inputs %+v", inputs)
	}
}

// TestSubAgentSpansNestOnTheServer: a durable sub-run of an agent with no
// instruments of its own is traced by its caller's, and its invoke_agent
// span is a child of the caller's execute_tool span for the call.
func TestSubAgentSpansNestOnTheServer(t *testing.T) {
	tp, rec := spanRecorder(t)
	lead := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("reader", `{"task":"count A1"}`), text("12.")}}
	reader := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("stock", `{}`), text("12 left")}}
	stock := newTool(t, func(context.Context) (string, error) { return "12", nil }, onion.Name("stock"), onion.Description("Counts."), onion.Read)
	r, err := onion.NewAgent("reader", onion.WithModel(reader), stock)
	if err != nil {
		t.Fatal(err)
	}
	l, err := onion.NewAgent("lead", onion.WithModel(lead), r, telemetry.Option(telemetry.TracerProvider(tp), telemetry.Provider("test")))
	if err != nil {
		t.Fatal(err)
	}
	e := env(t, l)
	e.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&tracing{}}})
	in := input("how many A1?")
	in.Agent = "lead"
	if res := result(t, e, in); res.Output != "12." {
		t.Fatalf("answer %q", res.Output)
	}
	spans := rec.Ended()
	var callSpan, subRun sdktrace.ReadOnlySpan
	for _, s := range spans {
		switch s.Name() {
		case "execute_tool reader":
			callSpan = s
		case "invoke_agent reader":
			subRun = s
		}
	}
	if callSpan == nil || subRun == nil || subRun.Parent().SpanID() != callSpan.SpanContext().SpanID() {
		t.Fatalf("spans %v", names(spans))
	}
	chats := 0
	for _, s := range spans {
		if strings.HasPrefix(s.Name(), "chat") && s.Parent().SpanID() == subRun.SpanContext().SpanID() {
			chats++
		}
	}
	if chats != 2 {
		t.Errorf("%d chat spans under the sub-run's, want its 2 model requests: %v", chats, names(spans))
	}
}

// TestChildIDBounded: a sub-run's workflow ID is its call's key, or a
// hash of a key too long for one, the same each time.
func TestChildIDBounded(t *testing.T) {
	if got := childID("wf/1/tool/1/ab"); got != "wf/1/tool/1/ab" {
		t.Errorf("short key: %q", got)
	}
	long := strings.Repeat("w", 2000)
	if got := childID(long); len(got) > maxChildID || got != childID(long) || got == childID(long+"x") {
		t.Errorf("long key: %q", got)
	}
}

// TestRuntimeServesSubAgents: a worker serves the agents given as tools
// of the agents it is given, each once however often it meets it, and
// refuses two agents with one name.
func TestRuntimeServesSubAgents(t *testing.T) {
	lead := leadAndReader(t, &scripted{}, &scripted{})
	reader := drive.SubAgents(lead)[0]
	rt, err := newRuntime([]*onion.Agent{lead, reader, lead})
	if err != nil || len(rt.agents) != 2 || rt.agents["reader"] != reader {
		t.Fatalf("agents %v, %v", rt.agents, err)
	}
	other, err := onion.NewAgent("reader", onion.WithModel(&scripted{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newRuntime([]*onion.Agent{lead, other}); err == nil || !strings.Contains(err.Error(), `two agents are named "reader"`) {
		t.Errorf("two readers: %v", err)
	}
}

// TestSubAgentCallsReachTheCallersHooks: a call inside a durable sub-run
// reaches the lead's tool hooks, with the path of agents.
func TestSubAgentCallsReachTheCallersHooks(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	hook := onion.Hooks{AfterTool: func(_ context.Context, e onion.ToolEvent) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, strings.Join(append(slices.Clone(e.Call.Agents), e.Call.Name), "/"))
		return nil
	}}
	stock := newTool(t, func(context.Context) (string, error) { return "12", nil }, onion.Name("stock"), onion.Description("Counts."), onion.Read)
	r, err := onion.NewAgent("reader", onion.WithModel(&scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("stock", `{}`), text("12 left")}}), stock)
	if err != nil {
		t.Fatal(err)
	}
	l, err := onion.NewAgent("lead", onion.WithModel(&scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("reader", `{"task":"count"}`), text("12.")}}),
		r, onion.WithHooks(hook))
	if err != nil {
		t.Fatal(err)
	}
	e := env(t, l)
	in := input("how many?")
	in.Agent = "lead"
	if res := result(t, e, in); res.Output != "12." {
		t.Fatalf("answer %q", res.Output)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []string{"lead/reader/stock", "reader"}) {
		t.Errorf("the lead's AfterTool saw %v", seen)
	}
}
