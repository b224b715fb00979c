package temporal

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// recorder counts the hooks called, by name, and keeps what they saw.
type recorder struct {
	mu     sync.Mutex
	counts map[string]int
	models []onion.ModelEvent // AfterModel's
	tools  []onion.ToolEvent  // AfterTool's
}

func (r *recorder) hooks() onion.Hooks {
	add := func(name string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.counts == nil {
			r.counts = map[string]int{}
		}
		r.counts[name]++
	}
	return onion.Hooks{
		BeforeModel: func(context.Context, onion.ModelEvent) error { add("BeforeModel"); return nil },
		AfterModel: func(_ context.Context, e onion.ModelEvent) error {
			add("AfterModel")
			r.mu.Lock()
			r.models = append(r.models, e)
			r.mu.Unlock()
			return nil
		},
		BeforeTool: func(context.Context, onion.ToolEvent) error { add("BeforeTool"); return nil },
		OnComplete: func(context.Context, *onion.Result) { add("OnComplete") },
		OnError:    func(context.Context, error) { add("OnError") },
		AfterTool: func(_ context.Context, e onion.ToolEvent) error {
			add("AfterTool")
			r.mu.Lock()
			r.tools = append(r.tools, e)
			r.mu.Unlock()
			return nil
		},
	}
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[name]
}

// TestHooksFireOncePerModelRequestAndToolCall: a model request retried by
// Temporal and a read retried by the loop are still one request and one
// call to the hooks.
func TestHooksFireOncePerModelRequestAndToolCall(t *testing.T) {
	var n atomic.Int32
	lookup := newTool(t, func(struct{}) (string, error) {
		if n.Add(1) == 1 {
			return "", errors.New("the stock service is busy")
		}
		return "12 in stock", nil
	}, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		failure(&onion.ModelError{StatusCode: 503, Retryable: true, Err: errors.New("overloaded")}),
		calls("stock", `{}`),
		text("12 left"),
	}}
	var rec recorder
	res := result(t, env(t, newAgent(t, m, lookup, onion.ToolRetries(1), rec.hooks())), input("how many?"))
	if res.Output != "12 left" || len(m.sent()) != 3 || n.Load() != 2 {
		t.Fatalf("answer %q after %d requests and %d tool runs", res.Output, len(m.sent()), n.Load())
	}
	for name, want := range map[string]int{"BeforeModel": 2, "AfterModel": 2, "BeforeTool": 1, "AfterTool": 1, "OnComplete": 1, "OnError": 0} {
		if got := rec.count(name); got != want {
			t.Errorf("%s called %d times, want %d", name, got, want)
		}
	}
	if len(rec.models) == 2 && (rec.models[0].RunID != "wf-1" || rec.models[0].Iteration != 1 || !rec.models[0].WithTools ||
		rec.models[0].ToolCalls != 1 || rec.models[1].Text != "12 left" || rec.models[1].Usage.Requests != 1) {
		t.Errorf("AfterModel saw %+v", rec.models)
	}
	if len(rec.tools) == 1 && (rec.tools[0].Call.Outcome != loop.Succeeded || rec.tools[0].Call.Attempts != 2) {
		t.Errorf("AfterTool saw %+v", rec.tools[0].Call)
	}
}

// TestBeforeModelHookErrorStopsTheRun: as with Run, a hook's error ends
// the run with that error, the model is not asked, and OnError hears it.
func TestBeforeModelHookErrorStopsTheRun(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){text("never")}}
	var ended error
	hooks := onion.Hooks{
		BeforeModel: func(context.Context, onion.ModelEvent) error { return errors.New("over budget") },
		OnError:     func(_ context.Context, err error) { ended = err },
	}
	res := result(t, env(t, newAgent(t, m, hooks)), input("hi"))
	if len(m.sent()) != 0 || res.StopReason != loop.StopFailed || !strings.Contains(res.Error, "BeforeModel hook: over budget") {
		t.Errorf("%d requests, stop %s, error %q", len(m.sent()), res.StopReason, res.Error)
	}
	if ended == nil || !strings.Contains(ended.Error(), "over budget") {
		t.Errorf("OnError got %v", ended)
	}
}

// TestModelRetriesAreTheAgents: a 429 with Retry-After is sent again as
// many times as the agent's Retries says, and no more.
func TestModelRetriesAreTheAgents(t *testing.T) {
	slow := failure(&onion.ModelError{StatusCode: 429, Retryable: true, RetryAfter: 2 * time.Second, Err: errors.New("slow down")})
	for _, c := range []struct {
		retries  int
		requests int
		answer   string
	}{
		{retries: 0, requests: 1},
		{retries: 1, requests: 2},
		{retries: 5, requests: 5, answer: "hello"},
	} {
		m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){slow, slow, slow, slow, text("hello")}}
		res := result(t, env(t, newAgent(t, m, onion.Retries(c.retries))), input("hi"))
		if len(m.sent()) != c.requests || res.Output != c.answer {
			t.Errorf("Retries(%d): %d requests (want %d), answer %q, error %q", c.retries, len(m.sent()), c.requests, res.Output, res.Error)
		}
	}
}

// TestModelRetriesOptionOverridesTheAgent: ModelRetries, when given, wins.
func TestModelRetriesOptionOverridesTheAgent(t *testing.T) {
	slow := failure(&onion.ModelError{StatusCode: 429, Retryable: true, RetryAfter: 2 * time.Second, Err: errors.New("slow down")})
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){slow, slow, text("hello")}}
	res := result(t, env(t, newAgent(t, m, onion.Retries(5))), input("hi", ModelRetries(1)))
	if len(m.sent()) != 2 || res.StopReason != loop.StopFailed {
		t.Errorf("%d requests (want 2), stop %s", len(m.sent()), res.StopReason)
	}
}

// TestModelBadRequestIsNotRetriedWhateverRetries: a 400 is sent once even
// when the agent allows many retries.
func TestModelBadRequestIsNotRetriedWhateverRetries(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		failure(&onion.ModelError{StatusCode: 400, Err: errors.New("bad request")}), text("never"),
	}}
	res := result(t, env(t, newAgent(t, m, onion.Retries(5))), input("hi"))
	if len(m.sent()) != 1 || res.StopReason != loop.StopFailed || !strings.Contains(res.Error, "bad request") {
		t.Errorf("%d requests, stop %s, error %q", len(m.sent()), res.StopReason, res.Error)
	}
}

// TestMaxRetryAfterIsTheAgents: a Retry-After past the agent's
// MaxRetryAfter fails the request instead of waiting.
func TestMaxRetryAfterIsTheAgents(t *testing.T) {
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		failure(&onion.ModelError{StatusCode: 429, Retryable: true, RetryAfter: 7 * time.Second, Err: errors.New("slow down")}), text("never"),
	}}
	res := result(t, env(t, newAgent(t, m, onion.MaxRetryAfter(time.Second))), input("hi"))
	if len(m.sent()) != 1 || !strings.Contains(res.Error, "longer than 1s") {
		t.Errorf("%d requests, error %q", len(m.sent()), res.Error)
	}
}

// TestModelFailureFollowsTheAgentsRule: what is retried is what
// onion.Retryable says, not any net.Error.
func TestModelFailureFollowsTheAgentsRule(t *testing.T) {
	for _, c := range []struct {
		err   error
		retry bool
	}{
		{io.ErrUnexpectedEOF, true}, // a reply cut short
		{&netTimeout{context.DeadlineExceeded}, false},
		{&onion.ModelError{StatusCode: 500, Retryable: true}, true},
		{&onion.ModelError{StatusCode: 400}, false},
	} {
		var app *temporal.ApplicationError
		if err := modelFailure(c.err, time.Minute); !errors.As(err, &app) || app.NonRetryable() == c.retry {
			t.Errorf("%v: retryable %v, want %v", c.err, app != nil && !app.NonRetryable(), c.retry)
		}
	}
}

// netTimeout is a net.Error carrying the caller's own deadline.
type netTimeout struct{ err error }

func (e *netTimeout) Error() string   { return "i/o: " + e.err.Error() }
func (e *netTimeout) Unwrap() error   { return e.err }
func (e *netTimeout) Timeout() bool   { return true }
func (e *netTimeout) Temporary() bool { return false }

// records is a slog handler that keeps the messages it is given.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// TestActivitiesLogWithTheAgentsLogger: the model request, its retry and
// the tool call are logged by the agent's own logger.
func TestActivitiesLogWithTheAgentsLogger(t *testing.T) {
	lookup := newTool(t, func(struct{}) (string, error) { return "12", nil }, onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		failure(&onion.ModelError{StatusCode: 503, Retryable: true, Err: errors.New("overloaded")}),
		calls("stock", `{}`), text("12 left"),
	}}
	var h records
	result(t, env(t, newAgent(t, m, lookup, onion.Logger(slog.New(&h)))), input("how many?"))
	h.mu.Lock()
	got := strings.Join(h.msgs, "; ")
	h.mu.Unlock()
	want := "model request failed, retrying; model request; tool call attempt; model request"
	if got != want {
		t.Errorf("the agent's logger got %q, want %q", got, want)
	}
}

// TestReplayCallsNoHook: replaying recorded histories (which hold tool
// calls, approvals and finished runs) calls none of the agent's hooks.
func TestReplayCallsNoHook(t *testing.T) {
	files := recordedHistories(t)
	var rec recorder
	rt, err := newRuntime([]*onion.Agent{replayLead(t, replayAgent(t, rec.hooks()))})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(rt.run, workflow.RegisterOptions{Name: WorkflowName})
		if err := replay(r, f); err != nil {
			t.Fatalf("replay of %s: %v", f, err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.counts) != 0 {
		t.Errorf("replaying %d histories called hooks %v", len(files), rec.counts)
	}
}
