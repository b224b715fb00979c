package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// scripted is a model that answers with its replies in order, and records
// the requests it got.
type scripted struct {
	mu       sync.Mutex
	replies  []func(*onion.Request) (*onion.Response, error)
	requests []*onion.Request
}

func (s *scripted) Generate(_ context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	if len(s.replies) == 0 {
		return nil, &onion.ModelError{StatusCode: 400, Err: errors.New("the script has no reply left")}
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r(req)
}

func (s *scripted) sent() []*onion.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*onion.Request(nil), s.requests...)
}

// calls is a reply asking for tool calls, given as name, arguments pairs;
// the calls get the IDs c1, c2, ….
func calls(nameArgs ...string) func(*onion.Request) (*onion.Response, error) {
	return func(*onion.Request) (*onion.Response, error) {
		var tcs []onion.ToolRequest
		for i := 0; i+1 < len(nameArgs); i += 2 {
			tcs = append(tcs, onion.ToolRequest{ID: fmt.Sprintf("c%d", i/2+1), Name: nameArgs[i], Arguments: nameArgs[i+1]})
		}
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, ToolCalls: tcs}}, nil
	}
}

func text(s string) func(*onion.Request) (*onion.Response, error) {
	return func(*onion.Request) (*onion.Response, error) {
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: s}}, nil
	}
}

func failure(err error) func(*onion.Request) (*onion.Response, error) {
	return func(*onion.Request) (*onion.Response, error) { return nil, err }
}

func newTool(t *testing.T, fn any, opts ...onion.ToolOption) *onion.Tool {
	t.Helper()
	tool, err := onion.NewTool(fn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// env is a test workflow environment with the runtime of these agents
// registered.
func env(t *testing.T, agents ...*onion.Agent) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(quietLogger{})
	e := s.NewTestWorkflowEnvironment()
	rt, err := newRuntime(agents)
	if err != nil {
		t.Fatal(err)
	}
	rt.register(e)
	e.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "wf-1"})
	return e
}

func newAgent(t *testing.T, m onion.LanguageModel, items ...any) *onion.Agent {
	t.Helper()
	a, err := onion.NewAgent("shop", append([]any{onion.WithModel(m)}, items...)...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// input is the input Start sends for prompt with opts.
func input(prompt string, opts ...StartOption) runInput {
	cfg, err := newStartConfig(opts)
	if err != nil {
		panic(err)
	}
	return runInput{Agent: "shop", Prompt: prompt, History: cfg.history, Settings: cfg.settings, Answer: cfg.answer}
}

// result runs the workflow to its end and returns its result.
func result(t *testing.T, e *testsuite.TestWorkflowEnvironment, in runInput) loop.Result {
	t.Helper()
	e.ExecuteWorkflow(WorkflowName, in)
	if !e.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := e.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var res loop.Result
	if err := e.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

func outcomes(res loop.Result) string {
	var b []string
	for _, c := range res.Calls {
		b = append(b, c.Name+":"+string(c.Outcome))
	}
	return strings.Join(b, " ")
}

func TestReadIsRetriedToolRetriesTimes(t *testing.T) {
	var keys []string
	var n atomic.Int32
	lookup := newTool(t, func(ctx context.Context, in struct{ SKU string }) (string, error) {
		c, _ := onion.CallInfo(ctx)
		keys = append(keys, c.IdempotencyKey)
		if n.Add(1) < 3 {
			return "", errors.New("the stock service is busy")
		}
		return "12 in stock", nil
	}, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("stock", `{"SKU":"a"}`), text("12 left")}}
	res := result(t, env(t, newAgent(t, m, lookup, onion.ToolRetries(2))), input("how many?"))
	if res.Output != "12 left" || outcomes(res) != "stock:succeeded" || res.Calls[0].Attempts != 3 {
		t.Fatalf("result %q, calls %s, attempts %d", res.Output, outcomes(res), res.Calls[0].Attempts)
	}
	// The same key on every attempt: the workflow ID and the activity ID.
	want := "wf-1/tool/1/c1"
	if len(keys) != 3 || keys[0] != want || keys[1] != want || keys[2] != want {
		t.Errorf("idempotency keys %q, want %q three times", keys, want)
	}
}

func TestReadRetriesStopAtToolRetries(t *testing.T) {
	var n atomic.Int32
	lookup := newTool(t, func(struct{}) (string, error) { n.Add(1); return "", errors.New("down") }, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("stock", `{}`), text("sorry")}}
	res := result(t, env(t, newAgent(t, m, lookup, onion.ToolRetries(1))), input("how many?"))
	if n.Load() != 2 || outcomes(res) != "stock:failed" {
		t.Errorf("ran %d times (want ToolRetries+1 = 2), calls %s", n.Load(), outcomes(res))
	}
}

func TestToolFailureIsAResultNotAnActivityError(t *testing.T) {
	send := newTool(t, func(struct{}) error { return errors.New("mail server said no") }, onion.Name("send"))
	a := newAgent(t, &scripted{}, send)
	rt, _ := newRuntime([]*onion.Agent{a})
	var s testsuite.WorkflowTestSuite
	ae := s.NewTestActivityEnvironment()
	ae.RegisterActivityWithOptions(rt.tool, activityOptions(toolActivity))
	v, err := ae.ExecuteActivity(toolActivity, toolInput{Agent: "shop", RunID: "r", Call: loop.Call{ID: "c1", Name: "send", Intent: loop.Write, Arguments: `{}`, Attempts: 1}})
	if err != nil {
		t.Fatalf("the tool's failure came back as an activity error: %v", err)
	}
	var d loop.Done
	if err := v.Get(&d); err != nil {
		t.Fatal(err)
	}
	if d.Failure != loop.ToolFailed || !strings.Contains(d.Error, "mail server said no") {
		t.Errorf("done %+v", d)
	}
}

// lostWorker makes the tool activity of the named tool fail the way a lost
// worker does (no heartbeat in time) on its first count attempts, and run
// the real activity afterwards.
func lostWorker(e *testsuite.TestWorkflowEnvironment, rt *runtime, tool string, count int, ran *atomic.Int32) {
	e.OnActivity(toolActivity, mock.Anything, mock.Anything).Return(func(ctx context.Context, in toolInput) (toolOutput, error) {
		if in.Call.Name == tool && int(ran.Add(1)) <= count {
			return toolOutput{}, temporal.NewHeartbeatTimeoutError()
		}
		return rt.tool(ctx, in)
	})
}

func TestWriteCutByLostWorkerIsOutcomeUnknownAndLaterWritesSkipped(t *testing.T) {
	var logged atomic.Int32
	send := newTool(t, func(struct{}) error { return nil }, onion.Name("send"))
	note := newTool(t, func(struct{}) error { logged.Add(1); return nil }, onion.Name("note"))
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("send", `{}`, "note", `{}`), text("I could not tell whether it was sent")}}
	a := newAgent(t, m, send, note)
	e := env(t, a)
	rt, _ := newRuntime([]*onion.Agent{a})
	var attempts atomic.Int32
	lostWorker(e, rt, "send", 10, &attempts)
	res := result(t, e, input("send it"))
	if attempts.Load() != 1 {
		t.Errorf("the write's activity ran %d times, want once", attempts.Load())
	}
	if outcomes(res) != "send:outcome_unknown note:skipped" {
		t.Fatalf("calls %s", outcomes(res))
	}
	if logged.Load() != 0 {
		t.Error("the later write ran")
	}
	if !strings.HasPrefix(res.Calls[1].Output, loop.SkippedPrefix) || !strings.Contains(res.Calls[0].Error, "worker did not report back") {
		t.Errorf("texts %q / %q", res.Calls[0].Error, res.Calls[1].Output)
	}
	if res.Output != "I could not tell whether it was sent" || res.StopReason != loop.StopNatural {
		t.Errorf("answer %q (%s)", res.Output, res.StopReason)
	}
}

func TestReadCutByLostWorkerRunsAgain(t *testing.T) {
	var ran atomic.Int32
	stock := newTool(t, func(struct{}) (string, error) { ran.Add(1); return "3", nil }, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("stock", `{}`), text("3 left")}}
	a := newAgent(t, m, stock) // ToolRetries 0: the rerun is Temporal's
	e := env(t, a)
	rt, _ := newRuntime([]*onion.Agent{a})
	var attempts atomic.Int32
	lostWorker(e, rt, "stock", 1, &attempts)
	res := result(t, e, input("how many?"))
	if outcomes(res) != "stock:succeeded" || ran.Load() != 1 || attempts.Load() != 2 {
		t.Errorf("calls %s, tool ran %d times, activity attempts %d", outcomes(res), ran.Load(), attempts.Load())
	}
}

func TestWriteNoWorkerStartedFailsSafeToRetry(t *testing.T) {
	send := newTool(t, func(struct{}) error { return nil }, onion.Name("send"))
	note := newTool(t, func(struct{}) error { return nil }, onion.Name("note"))
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("send", `{}`, "note", `{}`), text("try later")}}
	a := newAgent(t, m, send, note)
	e := env(t, a)
	e.OnActivity(toolActivity, mock.Anything, mock.Anything).Return(toolOutput{},
		temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil))
	res := result(t, e, input("send it"))
	if outcomes(res) != "send:failed note:skipped" || !strings.Contains(res.Calls[0].Output, "safe to call again") {
		t.Errorf("calls %s, output %q", outcomes(res), res.Calls[0].Output)
	}
}

func TestIdempotentWriteRunsAgainAfterLostWorker(t *testing.T) {
	var ran atomic.Int32
	put := newTool(t, func(struct{}) error { ran.Add(1); return nil }, onion.Name("put"), onion.Idempotent())
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("put", `{}`), text("stored")}}
	a := newAgent(t, m, put)
	e := env(t, a)
	rt, _ := newRuntime([]*onion.Agent{a})
	var attempts atomic.Int32
	lostWorker(e, rt, "put", 1, &attempts)
	res := result(t, e, input("store it"))
	if outcomes(res) != "put:succeeded" || attempts.Load() != 2 {
		t.Errorf("calls %s, activity attempts %d", outcomes(res), attempts.Load())
	}
}

func TestModelRetriesRetryableFailures(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		failure(&onion.ModelError{StatusCode: 503, Retryable: true, Err: errors.New("overloaded")}),
		failure(&onion.ModelError{StatusCode: 429, Retryable: true, RetryAfter: 7 * time.Second, Err: errors.New("slow down")}),
		text("hello"),
	}}
	res := result(t, env(t, newAgent(t, m)), input("hi"))
	if res.Output != "hello" || len(m.sent()) != 3 {
		t.Errorf("answer %q after %d requests", res.Output, len(m.sent()))
	}
}

func TestModelClientErrorIsNotRetried(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		failure(&onion.ModelError{StatusCode: 400, Err: errors.New("bad model name")}),
		text("never"),
	}}
	res := result(t, env(t, newAgent(t, m)), input("hi"))
	if len(m.sent()) != 1 || res.StopReason != loop.StopFailed || !strings.Contains(res.Error, "bad model name") {
		t.Errorf("%d requests, stop %s, error %q", len(m.sent()), res.StopReason, res.Error)
	}
}

func TestModelFailureCarriesRetryAfter(t *testing.T) {
	err := modelFailure(&onion.ModelError{StatusCode: 429, Retryable: true, RetryAfter: 7 * time.Second, Err: errors.New("slow down")}, time.Minute)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.NonRetryable() || app.NextRetryDelay() != 7*time.Second {
		t.Errorf("429 with Retry-After 7s gave %#v", err)
	}
	err = modelFailure(&onion.ModelError{StatusCode: 429, Retryable: true, RetryAfter: time.Hour, Err: errors.New("slow down")}, time.Minute)
	if !errors.As(err, &app) || !app.NonRetryable() || !strings.Contains(app.Message(), "longer than 1m0s") {
		t.Errorf("Retry-After past the bound gave %v", err)
	}
	err = modelFailure(&onion.ModelError{StatusCode: 404, Err: errors.New("no such model")}, time.Minute)
	if !errors.As(err, &app) || !app.NonRetryable() {
		t.Errorf("404 gave %v", err)
	}
	err = modelFailure(errors.New("something odd"), time.Minute)
	if !errors.As(err, &app) || !app.NonRetryable() {
		t.Errorf("an undescribed error gave %v", err)
	}
}

// approval runs a run whose one call needs approval, answering it with
// answer (from a delayed callback) unless answer is nil.
func approval(t *testing.T, answer func(e *testsuite.TestWorkflowEnvironment), opts ...StartOption) (loop.Result, int32) {
	t.Helper()
	var ran atomic.Int32
	refund := newTool(t, func(struct{ Order int }) error { ran.Add(1); return nil }, onion.Name("refund"), onion.RequireApproval())
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("refund", `{"Order":42}`), text("done")}}
	asked := false
	a := newAgent(t, m, refund, onion.Approver(func(context.Context, onion.Call) (bool, error) { asked = true; return true, nil }))
	e := env(t, a)
	if answer != nil {
		e.RegisterDelayedCallback(func() { answer(e) }, time.Hour)
	}
	res := result(t, e, input("refund 42", opts...))
	if asked {
		t.Error("the agent's own Approver was asked")
	}
	return res, ran.Load()
}

// update sends an Approve Update and reports how it went.
type update struct {
	rejected, done      error
	accepted, completed bool
}

var updates atomic.Int32

func send(e *testsuite.TestWorkflowEnvironment, d Decision) *update {
	u := &update{}
	e.UpdateWorkflow(approveUpdate, fmt.Sprintf("u%d", updates.Add(1)), &testsuite.TestUpdateCallback{
		OnAccept:   func() { u.accepted = true },
		OnReject:   func(err error) { u.rejected = err },
		OnComplete: func(_ any, err error) { u.completed, u.done = true, err },
	}, d)
	return u
}

func TestApprovalGranted(t *testing.T) {
	var pending []onion.Call
	var u *update
	res, ran := approval(t, func(e *testsuite.TestWorkflowEnvironment) {
		v, err := e.QueryWorkflow(pendingQuery)
		if err == nil {
			err = v.Get(&pending)
		}
		if err != nil {
			t.Errorf("pending: %v", err)
		}
		u = send(e, Decision{CallID: "c1", Approved: true})
	})
	if len(pending) != 1 || pending[0].ID != "c1" || pending[0].Name != "refund" || string(pending[0].Arguments) != `{"Order":42}` ||
		pending[0].IdempotencyKey != "wf-1/tool/1/c1" {
		t.Errorf("pending %+v", pending)
	}
	if !u.accepted || u.done != nil {
		t.Errorf("update %+v", u)
	}
	if ran != 1 || outcomes(res) != "refund:succeeded" {
		t.Errorf("ran %d, calls %s", ran, outcomes(res))
	}
}

func TestApprovalDenied(t *testing.T) {
	res, ran := approval(t, func(e *testsuite.TestWorkflowEnvironment) { send(e, Decision{CallID: "c1"}) })
	if ran != 0 || outcomes(res) != "refund:denied" || res.Calls[0].Error != "denied with Approve" {
		t.Errorf("ran %d, calls %s, error %q", ran, outcomes(res), res.Calls[0].Error)
	}
}

func TestApprovalExpiresDenied(t *testing.T) {
	res, ran := approval(t, nil) // nobody answers: 24 h pass on the test clock
	if ran != 0 || outcomes(res) != "refund:denied" || !strings.Contains(res.Calls[0].Error, "24h0m0s") {
		t.Errorf("ran %d, calls %s, error %q", ran, outcomes(res), res.Calls[0].Error)
	}
	res, _ = approval(t, nil, ApprovalTimeout(time.Minute))
	if !strings.Contains(res.Calls[0].Error, "1m0s") {
		t.Errorf("with ApprovalTimeout(1m): %q", res.Calls[0].Error)
	}
}

func TestApprovalUnknownCallRejected(t *testing.T) {
	var unknown, again *update
	res, ran := approval(t, func(e *testsuite.TestWorkflowEnvironment) {
		unknown = send(e, Decision{CallID: "nope", Approved: true})
		send(e, Decision{CallID: "c1", Approved: true})
		// Sent before the first answer's handler ran: the validator passes
		// it, the handler refuses it, the first answer stands.
		again = send(e, Decision{CallID: "c1", Approved: false})
	})
	if unknown.rejected == nil || unknown.accepted || !strings.Contains(unknown.rejected.Error(), `no call "nope"`) {
		t.Errorf("unknown call: %+v", unknown)
	}
	if again.rejected == nil && again.done == nil {
		t.Errorf("an answer to an answered call: %+v", again)
	}
	if ran != 1 || outcomes(res) != "refund:succeeded" {
		t.Errorf("ran %d, calls %s", ran, outcomes(res))
	}
}

func TestApprovalBySignal(t *testing.T) {
	res, ran := approval(t, func(e *testsuite.TestWorkflowEnvironment) {
		e.SignalWorkflow(ApproveSignal, Decision{CallID: "c1", Approved: true})
	})
	if ran != 1 || outcomes(res) != "refund:succeeded" {
		t.Errorf("ran %d, calls %s", ran, outcomes(res))
	}
}

func TestApproveIfWavesThrough(t *testing.T) {
	var ran atomic.Int32
	refund := newTool(t, func(in struct{ Amount int }) error { ran.Add(1); return nil }, onion.Name("refund"),
		onion.ApproveIf(func(_ context.Context, c onion.Call) (bool, error) {
			var in struct{ Amount int }
			err := json.Unmarshal(c.Arguments, &in)
			return in.Amount > 100, err
		}))
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("refund", `{"Amount":5}`), text("done")}}
	res := result(t, env(t, newAgent(t, m, refund)), input("refund 5"))
	if ran.Load() != 1 || outcomes(res) != "refund:succeeded" {
		t.Errorf("ran %d, calls %s", ran.Load(), outcomes(res))
	}
}

func TestContinueAsNewKeepsTheConversation(t *testing.T) {
	stock := newTool(t, func(struct{}) (string, error) { return "3", nil }, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		calls("stock", `{}`), calls("stock", `{}`), text("3 left"),
	}}
	a := newAgent(t, m, stock)
	e := env(t, a)
	e.SetCurrentHistoryLength(20) // the test environment keeps no history of its own
	e.ExecuteWorkflow(WorkflowName, input("how many?", HistoryBudget(5, 1<<30)))
	var can *workflow.ContinueAsNewError
	if err := e.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow error %v, want continue-as-new", err)
	}
	var next runInput
	if err := converterGet(can, &next); err != nil {
		t.Fatal(err)
	}
	if next.State == nil || next.State.Iteration != 2 || len(next.State.Result.Calls) != 1 {
		t.Fatalf("the next run's state: %+v", next.State)
	}
	// The next run picks up where the first stopped, with the budget
	// raised so that it ends.
	next.Settings.HistoryEvents = 10_000
	res := result(t, env(t, a), next)
	if res.Output != "3 left" || outcomes(res) != "stock:succeeded stock:succeeded" || res.Iterations != 2 {
		t.Errorf("answer %q, calls %s, iterations %d", res.Output, outcomes(res), res.Iterations)
	}
	reqs := m.sent()
	last := reqs[len(reqs)-1]
	if len(reqs) != 3 || last.Messages[1].Content != "how many?" || len(last.Messages) != 6 {
		t.Errorf("%d requests; the last has %d messages, the prompt %q", len(reqs), len(last.Messages), last.Messages[1].Content)
	}
}

func TestOutputCappedBeforeHistory(t *testing.T) {
	big := newTool(t, func(struct{}) (string, error) { return strings.Repeat("x", 100<<10), nil }, onion.Name("dump"), onion.Read)
	a := newAgent(t, &scripted{}, big, onion.MaxToolOutput(1000))
	rt, _ := newRuntime([]*onion.Agent{a})
	var s testsuite.WorkflowTestSuite
	ae := s.NewTestActivityEnvironment()
	ae.RegisterActivityWithOptions(rt.tool, activityOptions(toolActivity))
	v, err := ae.ExecuteActivity(toolActivity, toolInput{Agent: "shop", Call: loop.Call{ID: "c1", Name: "dump", Intent: loop.Read, Arguments: `{}`}})
	if err != nil {
		t.Fatal(err)
	}
	var d loop.Done
	if err := v.Get(&d); err != nil {
		t.Fatal(err)
	}
	if len(d.Output) > 1000 || !strings.Contains(d.Output, "output cut") {
		t.Errorf("the activity's result carries %d bytes", len(d.Output))
	}
}

func TestOversizedOutputFailsTheCall(t *testing.T) {
	big := newTool(t, func(struct{}) (string, error) { return strings.Repeat("x", 3<<20), nil }, onion.Name("dump"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("dump", `{}`), text("too big")}}
	res := result(t, env(t, newAgent(t, m, big, onion.MaxToolOutput(4<<20))), input("dump"))
	if outcomes(res) != "dump:failed" || !strings.Contains(res.Calls[0].Error, "2 MB") {
		t.Errorf("calls %s, error %q", outcomes(res), res.Calls[0].Error)
	}
}

func TestOversizedArgumentsFailWithoutRunning(t *testing.T) {
	var ran atomic.Int32
	put := newTool(t, func(struct{ Body string }) error { ran.Add(1); return nil }, onion.Name("put"))
	// Arguments that fit in the model's reply but not with the rest of the
	// call's input.
	huge := `{"Body":"` + strings.Repeat("y", maxPayload-40) + `"}`
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("put", huge), text("too big")}}
	a := newAgent(t, m, put)
	e := env(t, a)
	rt, _ := newRuntime([]*onion.Agent{a})
	// The model's reply is a hair under the limit; let it through as it is.
	e.OnActivity(modelActivity, mock.Anything, mock.Anything).Return(func(ctx context.Context, in modelInput) (*loop.Response, error) {
		if len(m.sent()) == 0 {
			return m.Generate(ctx, in.Request, nil)
		}
		return rt.model(ctx, in)
	})
	res := result(t, e, input("store"))
	if ran.Load() != 0 || outcomes(res) != "put:failed" || !strings.Contains(res.Calls[0].Error, "did not run") {
		t.Errorf("ran %d, calls %s, error %q", ran.Load(), outcomes(res), res.Calls[0].Error)
	}
}

func TestOversizedModelReplyEndsTheRun(t *testing.T) {
	huge := `{"Body":"` + strings.Repeat("y", 3<<20) + `"}`
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("put", huge), text("never")}}
	put := newTool(t, func(struct{ Body string }) error { return nil }, onion.Name("put"))
	res := result(t, env(t, newAgent(t, m, put)), input("store"))
	if len(m.sent()) != 1 || res.StopReason != loop.StopFailed || !strings.Contains(res.Error, "the model's reply is") {
		t.Errorf("%d requests, stop %s, error %q", len(m.sent()), res.StopReason, res.Error)
	}
}

func TestServerSuggestionContinuesAsNew(t *testing.T) {
	stock := newTool(t, func(struct{}) (string, error) { return "3", nil }, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){calls("stock", `{}`), text("3 left")}}
	e := env(t, newAgent(t, m, stock))
	e.SetContinueAsNewSuggested(true)
	e.ExecuteWorkflow(WorkflowName, input("how many?"))
	var can *workflow.ContinueAsNewError
	if err := e.GetWorkflowError(); !errors.As(err, &can) || len(m.sent()) != 1 {
		t.Errorf("workflow error %v after %d requests, want continue-as-new after the first", err, len(m.sent()))
	}
}

func TestUnknownAgentFailsTheRun(t *testing.T) {
	e := env(t, newAgent(t, &scripted{}))
	in := input("hi")
	in.Agent = "nobody"
	e.ExecuteWorkflow(WorkflowName, in)
	if err := e.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), `no agent named "nobody"`) {
		t.Errorf("workflow error %v", err)
	}
}

func TestCancelWhileWaitingForApproval(t *testing.T) {
	res, ran := approval(t, func(e *testsuite.TestWorkflowEnvironment) { e.CancelWorkflow() })
	if ran != 0 || res.StopReason != loop.StopCanceled || outcomes(res) != "refund:skipped" {
		t.Errorf("ran %d, stop %s, calls %s", ran, res.StopReason, outcomes(res))
	}
}
