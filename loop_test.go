package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// newAgent starts an agent on s with fast retries.
func newAgent(t *testing.T, s *oniontest.Server, items ...any) *onion.Agent {
	t.Helper()
	noteScripted(t)
	items = append(append([]any{onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.Model("test-model"),
		onion.RetryBackoff(time.Millisecond, 5*time.Millisecond)}, wire...), items...)
	a, err := onion.NewAgent("test", items...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// toolMessages returns the tool messages of request n, by call ID.
func toolMessages(t *testing.T, s *oniontest.Server, n int) map[string]string {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) <= n {
		t.Fatalf("only %d requests, want request %d", len(reqs), n)
	}
	out := map[string]string{}
	for _, m := range reqs[n].ToolResults() {
		out[m.ToolCallID] = m.Content
	}
	return out
}

// Lookup finds the value stored under key.
//
// key: what to look up
//
//onion:intent read
func Lookup(ctx context.Context, key string) (string, error) {
	switch key {
	case "boom":
		panic("lookup exploded")
	case "fail":
		return "", errors.New("no such key")
	case "slow":
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "value of " + key, nil
}

func TestAnswerWithoutTools(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Hello there."))
	a := newAgent(t, s, Lookup)
	res, err := a.Run(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "Hello there." || res.StopReason != onion.StopNatural || res.Iterations != 0 {
		t.Errorf("result = %+v", res)
	}
	req := s.Requests()[0].Body
	if req.ToolChoice != "auto" || len(req.Tools) != 1 || req.Tools[0].Function.Name != "lookup" {
		t.Errorf("request tools = %+v, choice %v", req.Tools, req.ToolChoice)
	}
	if req.Messages[0].Role != openai.ChatMessageRoleSystem || !strings.Contains(req.Messages[0].Content, "not orders") {
		t.Errorf("system message = %+v", req.Messages[0])
	}
	if res.Usage.Requests != 1 || res.Usage.TotalTokens == 0 {
		t.Errorf("usage = %+v", res.Usage)
	}
}

func TestToolProblemsGoBackToTheModel(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(
			oniontest.Call("nope", `{}`),
			oniontest.Call("lookup", `{"key": `),
			oniontest.Call("lookup", `{"key": 7}`),
			oniontest.Call("lookup", `["key"]`),
			oniontest.Call("lookup", `{"key":"fail"}`),
			oniontest.Call("lookup", `{"key":"boom"}`),
			oniontest.Call("lookup", `{"key":"a"}`),
		),
		oniontest.Text("done"),
	)
	a := newAgent(t, s, Lookup)
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done" || len(res.ToolCalls) != 7 {
		t.Fatalf("result = %+v", res)
	}
	msgs := toolMessages(t, s, 1)
	want := []struct{ contains, outcome string }{
		{"error: unknown tool \"nope\":\n- no tool has that name; call one of the tools listed below\ntools: lookup", "failed"},
		{"arguments are not valid JSON", "failed"},
		{"key: expected string, got number 7", "failed"},
		{"arguments: expected object, got array", "failed"},
		{"error: no such key", "failed"},
		{`panicked: lookup exploded`, "failed"},
		{"value of a", "succeeded"},
	}
	for i, w := range want {
		c := res.ToolCalls[i]
		if !strings.Contains(msgs[c.ID], w.contains) || string(c.Outcome) != w.outcome {
			t.Errorf("call %d: message %q, outcome %s; want %q, %s", i, msgs[c.ID], c.Outcome, w.contains, w.outcome)
		}
	}
}

func TestToolTimeout(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"slow"}`)),
		oniontest.Text("ok"),
	)
	a := newAgent(t, s, Lookup, onion.ToolTimeout(50*time.Millisecond))
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	c := res.ToolCalls[0]
	if c.Outcome != onion.Failed || !strings.Contains(toolMessages(t, s, 1)[c.ID], "timed out after 50ms") {
		t.Errorf("call = %+v", c)
	}
}

func TestParallelReads(t *testing.T) {
	var started sync.WaitGroup
	started.Add(2)
	both := make(chan struct{})
	go func() { started.Wait(); close(both) }()
	wait, err := onion.NewTool(func(ctx context.Context, a struct {
		N int `json:"n"`
	}) (string, error) {
		started.Done()
		select { // each call waits until the other has started
		case <-both:
			return fmt.Sprint(a.N), nil
		case <-time.After(10 * time.Second):
			return "", errors.New("the other read never started: reads ran one at a time")
		}
	}, onion.Name("wait"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("wait", `{"n":1}`), oniontest.Call("wait", `{"n":2}`)),
		oniontest.Text("both"),
	)
	res, err := newAgent(t, s, wait).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.ToolCalls {
		if c.Outcome != onion.Succeeded {
			t.Errorf("call %s: %s %s", c.ID, c.Outcome, c.Output)
		}
	}
}

func TestCapEndsWithAnAnswerWithoutTools(t *testing.T) {
	call := oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`))
	s := oniontest.NewServer(t, call, call, oniontest.Text("best effort"))
	a := newAgent(t, s, Lookup, onion.MaxIterations(2))
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != onion.StopMaxIterations || res.Output != "best effort" || res.Iterations != 2 {
		t.Errorf("result = %+v", res)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if hasTools := len(r.Body.Tools) > 0; hasTools != (i < 2) {
			t.Errorf("request %d has tools: %v", i, hasTools)
		}
	}
	last := reqs[2].Body.Messages
	if !strings.Contains(last[len(last)-1].Content, "do not invent") {
		t.Errorf("last request does not ask for an answer from the evidence: %+v", last[len(last)-1])
	}
}

func TestMaxIterationsBelowOne(t *testing.T) {
	if _, err := onion.NewAgent("x", onion.MaxIterations(0)); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("err = %v", err)
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.RateLimited(0), oniontest.Text("ok"))
	out, err := newAgent(t, s).Input(context.Background(), "hi")
	if err != nil || out != "ok" || len(s.Requests()) != 2 {
		t.Errorf("out %q, err %v, %d requests", out, err, len(s.Requests()))
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	body := `{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`
	s := oniontest.NewServer(t, oniontest.Error(400, body))
	_, err := newAgent(t, s).Input(context.Background(), "hi")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
		t.Fatalf("err = %v", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestServerErrorsRetriedThenReturned(t *testing.T) {
	body := `{"error":{"message":"overloaded","type":"server_error"}}`
	s := oniontest.NewServer(t, oniontest.Error(503, body), oniontest.Error(503, body))
	_, err := newAgent(t, s, onion.Retries(1)).Input(context.Background(), "hi")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 || len(s.Requests()) != 2 {
		t.Errorf("err = %v after %d requests", err, len(s.Requests()))
	}
}

func TestCancelDuringModelRequest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := oniontest.NewServer(t, oniontest.Func(func(oniontest.Request) oniontest.Step {
		cancel()
		return oniontest.Text("too late").Delay(time.Minute)
	}))
	res, err := newAgent(t, s).Run(ctx, "hi")
	if !errors.Is(err, context.Canceled) || res.StopReason != onion.StopCanceled {
		t.Errorf("err = %v, result %+v", err, res)
	}
}

func TestCancelDuringTool(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block, err := onion.NewTool(func(ctx context.Context, _ struct{}) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}, onion.Name("block"))
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("block", `{}`)))
	res, err := newAgent(t, s, block).Run(ctx, "hi")
	if !errors.Is(err, context.Canceled) || res.StopReason != onion.StopCanceled {
		t.Fatalf("err = %v, result %+v", err, res)
	}
	if c := res.ToolCalls[0]; c.Outcome != onion.OutcomeUnknown {
		t.Errorf("a write cut by cancellation ended %s, want outcome_unknown", c.Outcome)
	}
}

func TestMultiTurnHistory(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)),
		oniontest.Text("first answer"),
		oniontest.Text("second answer"),
	)
	a := newAgent(t, s, Lookup).NewConversation()
	ctx := context.Background()
	if _, err := a.Input(ctx, "first question"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Input(ctx, "second question"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range s.Requests()[2].Body.Messages[1:] {
		got = append(got, m.Role+": "+m.Content)
	}
	want := []string{"user: first question", "assistant: first answer", "user: second question"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("second run sent %q, want %q", got, want)
	}
	saved, err := a.MarshalHistory()
	if err != nil {
		t.Fatal(err)
	}
	a.Reset()
	if len(a.History()) != 0 {
		t.Error("Reset kept history")
	}
	if err := a.UnmarshalHistory(saved); err != nil || len(a.History()) != 4 {
		t.Errorf("restored %d messages, err %v", len(a.History()), err)
	}
}

func TestKeepToolHistory(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)), oniontest.Text("done"))
	a := newAgent(t, s, Lookup, onion.KeepToolHistory()).NewConversation()
	if _, err := a.Input(context.Background(), "q"); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range a.History() {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,assistant" {
		t.Errorf("history roles = %s", got)
	}
}

func TestStream(t *testing.T) {
	for _, noIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("noIndex=%v", noIndex), func(t *testing.T) {
			step := oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`), oniontest.Call("lookup", `{"key":"b"}`))
			if noIndex {
				step = step.NoIndex()
			}
			s := oniontest.NewServer(t, step, oniontest.Text("the values are known"))
			a := newAgent(t, s, Lookup)
			var text strings.Builder
			var finished []string
			var res *onion.Result
			for e, err := range a.Stream(context.Background(), "go") {
				if err != nil {
					t.Fatal(err)
				}
				switch e.Kind {
				case onion.EventTextDelta:
					text.WriteString(e.Text)
				case onion.EventToolFinished:
					finished = append(finished, e.Call.Output)
				case onion.EventDone:
					res = e.Result
				}
			}
			if text.String() != "the values are known" || res == nil || res.Output != text.String() {
				t.Errorf("text %q, result %+v", text.String(), res)
			}
			if strings.Join(finished, "|") != "value of a|value of b" && strings.Join(finished, "|") != "value of b|value of a" {
				t.Errorf("tool outputs = %q", finished)
			}
			if !s.Requests()[0].Stream {
				t.Error("the request was not streamed")
			}
		})
	}
}

func TestStreamBreakCancels(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("one two three four"))
	a := newAgent(t, s)
	for e, err := range a.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == onion.EventTextDelta {
			break
		}
	}
}

func TestHooksAndLogs(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)), oniontest.Text("done"))
	var seen []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	a := newAgent(t, s, Lookup, onion.WithHooks(onion.Hooks{
		BeforeModel: func(_ context.Context, e onion.ModelEvent) error {
			note(fmt.Sprint("before model ", e.Iteration))
			return nil
		},
		AfterModel: func(_ context.Context, e onion.ModelEvent) error {
			note(fmt.Sprint("after model ", e.ToolCalls))
			return nil
		},
		BeforeTool: func(_ context.Context, e onion.ToolEvent) error { note("before " + e.Call.Name); return nil },
		AfterTool:  func(_ context.Context, e onion.ToolEvent) error { note("after " + string(e.Call.Outcome)); return nil },
		OnComplete: func(_ context.Context, r *onion.Result) { note("complete " + r.Output) },
	}))
	if _, err := a.Input(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	want := "before model 1|after model 1|before lookup|after succeeded|before model 2|after model 0|complete done"
	if got := strings.Join(seen, "|"); got != want {
		t.Errorf("hooks saw %s\nwant %s", got, want)
	}
}

func TestHookErrorStopsTheRun(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)))
	stop := errors.New("stop here")
	var ran atomic.Bool
	// A Hooks value is an Option as it is.
	a := newAgent(t, s, Lookup, onion.Hooks{
		BeforeTool: func(context.Context, onion.ToolEvent) error { return stop },
		AfterTool:  func(context.Context, onion.ToolEvent) error { ran.Store(true); return nil },
	})
	if _, err := a.Input(context.Background(), "go"); !errors.Is(err, stop) || ran.Load() {
		t.Errorf("err = %v, tool ran: %v", err, ran.Load())
	}
}

func TestConcurrentRuns(t *testing.T) {
	s := oniontest.NewServer(t)
	for range 8 {
		s.Add(oniontest.Func(func(r oniontest.Request) oniontest.Step {
			last := r.Body.Messages[len(r.Body.Messages)-1]
			if last.Role == openai.ChatMessageRoleTool {
				return oniontest.Text("answer to " + last.Content)
			}
			return oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"`+last.Content+`"}`))
		}))
	}
	a := newAgent(t, s, Lookup)
	var wg sync.WaitGroup
	answers := make([]string, 4)
	for i := range answers {
		wg.Go(func() {
			out, err := a.Input(context.Background(), fmt.Sprint("q", i))
			if err != nil {
				t.Error(err)
			}
			answers[i] = out
		})
	}
	wg.Wait()
	for i, got := range answers {
		if want := fmt.Sprintf("answer to value of q%d", i); got != want {
			t.Errorf("run %d answered %q, want %q", i, got, want)
		}
	}
	for i, r := range s.Requests() {
		if n := len(r.Body.Messages); n > 4 { // system, prompt, the call, its result
			t.Errorf("request %d carried %d messages: one run's history reached another", i, n)
		}
	}
}

func TestLogsOneRecordPerRequestAndCall(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)), oniontest.Text("done"))
	a := newAgent(t, s, Lookup, onion.Logger(logger), onion.APIKey("sk-secret-123"))
	if _, err := a.Input(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if n := strings.Count(out, `"msg":"model request"`); n != 2 {
		t.Errorf("%d model request records, want 2:\n%s", n, out)
	}
	if !strings.Contains(out, `"msg":"tool call"`) || !strings.Contains(out, `"tool":"lookup"`) || !strings.Contains(out, `"outcome":"succeeded"`) {
		t.Errorf("no tool call record:\n%s", out)
	}
	if strings.Contains(out, "sk-secret-123") {
		t.Error("the API key was logged")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestUnmarshalHistoryRejectsUnknownRoles(t *testing.T) {
	agent, err := onion.NewAgent("h", onion.APIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	a := agent.NewConversation()
	for _, bad := range []string{`[{"role":"wizard"}]`, `[{"role":"user","content":"hi"},{"content":"no role"}]`} {
		if err := a.UnmarshalHistory([]byte(bad)); err == nil || !strings.Contains(err.Error(), "role") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
	if len(a.History()) != 0 {
		t.Error("a rejected history was kept")
	}
}

// TestHistoryRoundTrip: a conversation with tool calls, reasoning and
// provider items comes back from JSON unchanged.
func TestHistoryRoundTrip(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)), oniontest.Text("done"))
	a := newAgent(t, s, Lookup, onion.KeepToolHistory()).NewConversation()
	if _, err := a.Input(context.Background(), "q"); err != nil {
		t.Fatal(err)
	}
	h := a.History()
	h = append(h, onion.Message{Role: onion.RoleAssistant, Reasoning: "because", Items: json.RawMessage(`[{"type":"reasoning","encrypted_content":"gAAA"}]`)})
	a.SetHistory(h)
	saved, err := a.MarshalHistory()
	if err != nil {
		t.Fatal(err)
	}
	b := newAgent(t, s, Lookup).NewConversation()
	if err := b.UnmarshalHistory(saved); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.History(), h) {
		t.Errorf("restored %+v\nwant %+v", b.History(), h)
	}
	if got := h[1].ToolCalls; len(got) != 1 || got[0].Name != "lookup" || got[0].Arguments != `{"key":"a"}` || h[2].ToolCallID != got[0].ID {
		t.Errorf("tool history %+v", h)
	}
}

// TestEveryTextObeysMaxToolOutput: a 768 KiB tool name, which used to be
// echoed whole, and the skip text naming it, fit MaxToolOutput.
func TestEveryTextObeysMaxToolOutput(t *testing.T) {
	huge := strings.Repeat("x", 768<<10)
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call(huge, `{}`), oniontest.Call("lookup", `{"key":"a"}`)), oniontest.Text("done"))
	res, err := newAgent(t, s, Lookup, onion.MaxToolOutput(300)).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	for id, msg := range toolMessages(t, s, 1) {
		if len(msg) > 300 {
			t.Errorf("call %s: a %d-byte message, past MaxToolOutput(300)", id, len(msg))
		}
	}
	if c := res.ToolCalls[0]; c.Outcome != onion.Failed || !strings.Contains(c.Output, "unknown tool") {
		t.Errorf("call %+v", c.Outcome)
	}
}
