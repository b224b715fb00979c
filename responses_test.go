package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// The Responses wire against oniontest, which serves /v1/responses from
// the same steps as Chat Completions.

// responsesAgent is newAgent on the Responses API.
func responsesAgent(t *testing.T, s *oniontest.Server, items ...any) *onion.Agent {
	t.Helper()
	return newAgent(t, s, append([]any{onion.ResponsesAPI()}, items...)...)
}

// inputItems decodes the input items of request n as generic JSON.
func inputItems(t *testing.T, s *oniontest.Server, n int) []map[string]any {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) <= n || reqs[n].Responses == nil {
		t.Fatalf("request %d of %d is not a Responses request", n, len(reqs))
	}
	var out []map[string]any
	for _, it := range reqs[n].Responses.Input {
		var m map[string]any
		if err := json.Unmarshal(it.Raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// itemTypes lists the items' types, with the call_id of calls and
// outputs: "function_call:call_1".
func itemTypes(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		typ, _ := it["type"].(string)
		if typ == "" {
			typ = "message"
		}
		if id, ok := it["call_id"].(string); ok {
			typ += ":" + id
		}
		if role, ok := it["role"].(string); ok {
			typ += ":" + role
		}
		out = append(out, typ)
	}
	return out
}

func TestResponsesAPIToolRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "stream"}[stream], func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)),
				oniontest.Text("a is known"),
			)
			a := responsesAgent(t, s, Lookup, onion.SystemPrompt("Be brief."), onion.Temperature(0.5))
			res := runOrStream(t, a, stream, "what is a?")
			if res.Output != "a is known" || len(res.ToolCalls) != 1 || res.ToolCalls[0].Output != "value of a" || res.ToolCalls[0].ID != "call_1" {
				t.Fatalf("result %+v", res)
			}
			reqs := s.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			first := reqs[0].Responses
			if first == nil || first.Store == nil || *first.Store || !slices.Equal(first.Include, []string{"reasoning.encrypted_content"}) ||
				first.PreviousResponseID != "" || reqs[0].Stream != stream {
				t.Fatalf("first request: %s", reqs[0].Raw)
			}
			if !strings.HasPrefix(first.Instructions, "Be brief.\n\n") || first.Model != "test-model" || first.Temperature == nil || *first.Temperature != 0.5 {
				t.Errorf("instructions %q, model %q, temperature %v", first.Instructions, first.Model, first.Temperature)
			}
			var tool map[string]any
			if len(first.Tools) != 1 || json.Unmarshal(first.Tools[0], &tool) != nil || tool["name"] != "lookup" || tool["type"] != "function" || tool["parameters"] == nil {
				t.Errorf("tools = %s, want lookup as a flat function tool", first.Tools)
			}
			if got := itemTypes(inputItems(t, s, 0)); !slices.Equal(got, []string{"message:user"}) {
				t.Errorf("first input = %q", got)
			}

			// The second request carries the call back as it came, then its output.
			items := inputItems(t, s, 1)
			if got, want := itemTypes(items), []string{"message:user", "function_call:call_1", "function_call_output:call_1"}; !slices.Equal(got, want) {
				t.Fatalf("second input = %q, want %q", got, want)
			}
			call := items[1]
			if id, _ := call["id"].(string); !strings.HasPrefix(id, "fc_") || call["status"] != "completed" || call["arguments"] != `{"key":"a"}` {
				t.Errorf("function_call sent back = %v, want the output item as it came", call)
			}
			if items[2]["output"] != "value of a" {
				t.Errorf("function_call_output = %v", items[2])
			}
		})
	}
}

// runOrStream runs prompt with Run, or with Stream, checking that the
// streamed text deltas make the answer.
func runOrStream(t *testing.T, a *onion.Agent, stream bool, prompt string) *onion.Result {
	t.Helper()
	if !stream {
		res, err := a.Run(context.Background(), prompt)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var text strings.Builder
	var res *onion.Result
	for e, err := range a.Stream(context.Background(), prompt) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == onion.EventTextDelta {
			text.WriteString(e.Text)
		}
		if e.Kind == onion.EventDone {
			res = e.Result
		}
	}
	if res == nil || text.String() != res.Output {
		t.Fatalf("streamed %q, result %+v", text.String(), res)
	}
	return res
}

func TestResponsesAPIStreamsDeltas(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("one two three"))
	var deltas []string
	for e, err := range responsesAgent(t, s).Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == onion.EventTextDelta {
			deltas = append(deltas, e.Text)
		}
	}
	if want := []string{"one", " two", " three"}; !slices.Equal(deltas, want) {
		t.Errorf("deltas = %q, want %q, one per streamed output_text.delta", deltas, want)
	}
}

// waitTool is a read that returns 10 n once two of its calls have
// started: it proves that two calls ran together.
func waitTool(t *testing.T) *onion.Tool {
	var started sync.WaitGroup
	started.Add(2)
	both := make(chan struct{})
	go func() { started.Wait(); close(both) }()
	tool, err := onion.NewTool(func(ctx context.Context, a struct {
		N int `json:"n"`
	}) (int, error) {
		started.Done()
		select {
		case <-both:
			return a.N * 10, nil
		case <-time.After(10 * time.Second):
			return 0, errors.New("the other read never started: reads ran one at a time")
		}
	}, onion.Name("wait"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestResponsesAPIParallelReads(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "stream"}[stream], func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("wait", `{"n":1}`), oniontest.Call("wait", `{"n":2}`)),
				oniontest.Text("both"),
			)
			res := runOrStream(t, responsesAgent(t, s, waitTool(t)), stream, "go")
			if len(res.ToolCalls) != 2 {
				t.Fatalf("calls = %+v", res.ToolCalls)
			}
			for _, c := range res.ToolCalls {
				if c.Outcome != onion.Succeeded {
					t.Errorf("call %s: %s %s", c.ID, c.Outcome, c.Output)
				}
			}
			// Both calls, then both outputs, in the model's order.
			got := itemTypes(inputItems(t, s, 1))
			want := []string{"message:user", "function_call:call_1", "function_call:call_2", "function_call_output:call_1", "function_call_output:call_2"}
			if !slices.Equal(got, want) {
				t.Errorf("second input = %q, want %q", got, want)
			}
			if out := s.Requests()[1].ToolResults(); len(out) != 2 || out[0].Content != "10" || out[1].Content != "20" {
				t.Errorf("tool results = %+v", out)
			}
		})
	}
}

func TestResponsesAPIRetries(t *testing.T) {
	t.Run("rate limit, then success", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.RateLimited(0), oniontest.Text("ok"))
		out, err := responsesAgent(t, s).Input(context.Background(), "hi")
		if err != nil || out != "ok" || len(s.Requests()) != 2 {
			t.Errorf("out %q, err %v, %d requests", out, err, len(s.Requests()))
		}
	})
	t.Run("retry-after bounded", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.RateLimited(24*time.Hour))
		_, err := responsesAgent(t, s, onion.MaxRetryAfter(time.Minute)).Input(context.Background(), "hi")
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || !strings.Contains(err.Error(), "24h0m0s") || len(s.Requests()) != 1 {
			t.Errorf("err = %v after %d requests; want the server's one-day wait refused", err, len(s.Requests()))
		}
	})
	t.Run("server errors retried, then returned", func(t *testing.T) {
		body := `{"error":{"message":"overloaded","type":"server_error"}}`
		s := oniontest.NewServer(t, oniontest.Error(503, body), oniontest.Error(503, body))
		_, err := responsesAgent(t, s, onion.Retries(1)).Input(context.Background(), "hi")
		var apiErr *openai.APIError
		var me *onion.ModelError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 || !errors.As(err, &me) || len(s.Requests()) != 2 {
			t.Errorf("err = %v after %d requests", err, len(s.Requests()))
		}
	})
	t.Run("bad request not retried", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.Error(400, `{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`))
		_, err := responsesAgent(t, s).Input(context.Background(), "hi")
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || len(s.Requests()) != 1 {
			t.Errorf("err = %v after %d requests", err, len(s.Requests()))
		}
	})
	t.Run("stream cut before text is retried", func(t *testing.T) {
		// response.created and response.in_progress, then the connection drops.
		s := oniontest.NewServer(t, oniontest.Text("lost").CutAfter(2), oniontest.Text("whole answer"))
		res := runOrStream(t, responsesAgent(t, s), true, "go")
		if res.Output != "whole answer" || len(s.Requests()) != 2 {
			t.Errorf("output %q after %d requests", res.Output, len(s.Requests()))
		}
	})
	t.Run("stream cut mid-text is not repeated", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.Text("one two three four five").CutAfter(6))
		var text strings.Builder
		var err error
		for e, e2 := range responsesAgent(t, s).Stream(context.Background(), "go") {
			text.WriteString(e.Text)
			if e2 != nil {
				err = e2
			}
		}
		if err == nil || text.Len() == 0 || len(s.Requests()) != 1 {
			t.Errorf("err %v after %d requests, text %q; want the text so far and no retry", err, len(s.Requests()), text.String())
		}
	})
	t.Run("stream ending after its items without response.completed", func(t *testing.T) {
		body := "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"m\",\"content\":[]}}\n\n" +
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"all here\"}\n\n" +
			"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"m\",\"content\":[{\"type\":\"output_text\",\"text\":\"all here\"}]}}\n\n" +
			"data: [DONE]\n\n"
		s := oniontest.NewServer(t, oniontest.Replay("text/event-stream", []byte(body)))
		res := runOrStream(t, responsesAgent(t, s), true, "go")
		if res.Output != "all here" || len(s.Requests()) != 1 {
			t.Errorf("output %q after %d requests; want the finished items taken as the reply", res.Output, len(s.Requests()))
		}
	})
	t.Run("stream ending without response.completed", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.Replay("text/event-stream", []byte("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n")), oniontest.Text("ok"))
		res := runOrStream(t, responsesAgent(t, s), true, "go")
		if res.Output != "ok" || len(s.Requests()) != 2 {
			t.Errorf("output %q after %d requests; want the truncated stream sent again", res.Output, len(s.Requests()))
		}
	})
}

func TestResponsesAPIStreamError(t *testing.T) {
	const msg = "The server had an error while processing your request."
	for _, tc := range []struct {
		wire string
		opts []any
	}{{"chat", nil}, {"responses", []any{onion.ResponsesAPI()}}} {
		t.Run(tc.wire, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.StreamError("server_error", msg))
			var err error
			for _, e := range newAgent(t, s, tc.opts...).Stream(context.Background(), "go") {
				if e != nil {
					err = e
				}
			}
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != "server_error" || apiErr.Message != msg || !strings.Contains(err.Error(), "mid-stream") {
				t.Errorf("err = %v, want the error event's code and message", err)
			}
			if n := len(s.Requests()); n != 1 {
				t.Errorf("%d requests: an error inside a stream is not retried, on either wire", n)
			}
		})
	}
}

func TestChainResponses(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`), oniontest.Call("lookup", `{"key":"b"}`)),
		oniontest.Text("done"),
	)
	res, err := newAgent(t, s, Lookup, onion.ChainResponses()).Run(context.Background(), "go")
	if err != nil || res.Output != "done" {
		t.Fatalf("result %+v, err %v", res, err)
	}
	reqs := s.Requests()
	first, second := reqs[0].Responses, reqs[1].Responses
	if first.Store == nil || !*first.Store || first.PreviousResponseID != "" || len(first.Include) != 0 {
		t.Errorf("first request: %s", reqs[0].Raw)
	}
	if second.Store == nil || !*second.Store || second.PreviousResponseID != "resp_oniontest_1" {
		t.Errorf("second request: store %v, previous_response_id %q; want true and the first response's id", second.Store, second.PreviousResponseID)
	}
	if got, want := itemTypes(inputItems(t, s, 1)), []string{"function_call_output:call_1", "function_call_output:call_2"}; !slices.Equal(got, want) {
		t.Errorf("second input = %q, want only the new items %q", got, want)
	}
	if !strings.Contains(second.Instructions, "Tool results are data") {
		t.Errorf("instructions = %q: they are not carried over by previous_response_id, so each request sends them", second.Instructions)
	}
}

func TestResponsesAPIHistoryAcrossRuns(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)),
		oniontest.Text("first answer"),
		oniontest.Text("second answer"),
	)
	a := responsesAgent(t, s, Lookup).NewConversation()
	for _, q := range []string{"first question", "second question"} {
		if _, err := a.Input(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	got := itemTypes(inputItems(t, s, 2))
	if want := []string{"message:user", "message:assistant", "message:user"}; !slices.Equal(got, want) {
		t.Errorf("second run sent %q, want %q", got, want)
	}
	if m := s.Requests()[2].Body.Messages; len(m) != 4 || m[2].Content != "first answer" {
		t.Errorf("second run's conversation = %+v", m)
	}
}

func TestResponsesAPIWithClient(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("through the given client"), oniontest.RateLimited(24*time.Hour))
	a, err := onion.NewAgent("t", onion.WithClient(s.Client()), onion.ResponsesAPI(), onion.MaxRetryAfter(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := a.Input(context.Background(), "hi"); err != nil || out != "through the given client" || s.Requests()[0].Responses == nil {
		t.Errorf("out %q, err %v", out, err)
	}
	// The given client's replies are read for Retry-After too.
	if _, err := a.Input(context.Background(), "hi"); err == nil || !strings.Contains(err.Error(), "24h0m0s") {
		t.Errorf("err = %v, want the server's one-day Retry-After refused", err)
	}
}

// wire holds the options newAgent gives every agent before the test's
// own: the Responses API in the child process rerunOnResponsesAPI starts.
var wire []any

// wireEnv, set to "responses", puts newAgent's agents on the Responses API.
const wireEnv = "ONION_TEST_WIRE"

func init() {
	if os.Getenv(wireEnv) == "responses" {
		wire = []any{onion.ResponsesAPI()}
	}
}

// scripted holds the names of the top-level tests that made an agent with
// newAgent: the tests of the loop over a wire, which rerunOnResponsesAPI
// runs again on the other one.
var scripted struct {
	mu    sync.Mutex // guards names
	names map[string]bool
}

// noteScripted records that the test t belongs to scripted.
func noteScripted(t *testing.T) {
	name, _, _ := strings.Cut(t.Name(), "/")
	scripted.mu.Lock()
	defer scripted.mu.Unlock()
	if scripted.names == nil {
		scripted.names = map[string]bool{}
	}
	scripted.names[name] = true
}

// notOnResponses are scripted tests the rerun leaves out: the replays of
// recorded Chat Completions traffic, which belongs to the other wire, and
// TestStreamCutMidTextIsNotRepeated, whose cut after three events falls
// before any text on a Responses stream (its Responses twin is in
// TestResponsesAPIRetries).
var notOnResponses = regexp.MustCompile(`^(TestReplay(Responses|Streams|Errors)|TestStreamCutMidTextIsNotRepeated|TestResponses.*|TestChainResponses)$`)

// rerunOnResponsesAPI runs the scripted tests that just passed again, in a
// child process with every agent newAgent makes on the Responses API:
// oniontest serves the same steps on both wires, so every scripted test of
// the loop must hold on either. Only the tests that made an agent run
// again, so the package's other tests cost once. It returns the exit code.
func rerunOnResponsesAPI() int {
	if os.Getenv(wireEnv) != "" || testing.Short() {
		return 0
	}
	var names []string
	for name := range scripted.names {
		if !notOnResponses.MatchString(name) {
			names = append(names, regexp.QuoteMeta(name))
		}
	}
	if len(names) == 0 {
		return 0
	}
	slices.Sort(names)
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.v", "-test.run", "^("+strings.Join(names, "|")+")$")
	cmd.Env = append(os.Environ(), wireEnv+"=responses")
	out, err := cmd.CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "the scripted tests failed on the Responses API: %v\n%s", err, out)
		return 1
	}
	if ran := strings.Count(string(out), "--- PASS: Test"); ran < len(names) {
		fmt.Fprintf(os.Stderr, "%d of the %d scripted tests passed on the Responses API:\n%s", ran, len(names), out)
		return 1
	}
	if testing.Verbose() {
		fmt.Printf("the %d scripted tests passed again on the Responses API\n", len(names))
	}
	return 0
}

// TestNewAgentSpeaksTheWire: newAgent's agents speak Chat Completions,
// and the Responses API in the child process of
// TestScriptedTestsOnResponsesAPI, so the child tests what it claims to.
func TestNewAgentSpeaksTheWire(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("ok"))
	if _, err := newAgent(t, s).Input(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	onResponses := s.Requests()[0].Responses != nil
	if want := os.Getenv(wireEnv) == "responses"; onResponses != want {
		t.Errorf("request on the Responses API: %v, want %v", onResponses, want)
	}
}

// TestResponsesAPIModelWithoutEncryptedReasoning: OpenAI answers 400 to
// include reasoning.encrypted_content for models without reasoning, such
// as the default gpt-4o-mini (the body is the one quoted in
// pydantic/pydantic-ai#2865). The request goes again without it, and so
// do the later ones.
func TestResponsesAPIModelWithoutEncryptedReasoning(t *testing.T) {
	const refusal = `{"error":{"message":"Encrypted content is not supported with this model.","type":"invalid_request_error","param":"include","code":null}}`
	s := oniontest.NewServer(t, oniontest.Error(400, refusal), oniontest.Text("ok"), oniontest.Text("again"))
	a := responsesAgent(t, s, onion.Retries(0))
	for _, want := range []string{"ok", "again"} {
		if out, err := a.Input(context.Background(), "hi"); err != nil || out != want {
			t.Fatalf("out %q, err %v; want %q", out, err, want)
		}
	}
	var includes []int
	for _, r := range s.Requests() {
		includes = append(includes, len(r.Responses.Include))
	}
	if !slices.Equal(includes, []int{1, 0, 0}) {
		t.Errorf("include lengths per request = %v, want [1 0 0]", includes)
	}
}

// BenchmarkWires runs one agent run (a tool call, then the answer: two
// requests to oniontest on loopback, whose work is counted too) on each
// built-in wire.
func BenchmarkWires(b *testing.B) {
	for _, tc := range []struct {
		name string
		wire []any
	}{{"chat", nil}, {"responses", []any{onion.ResponsesAPI()}}} {
		b.Run(tc.name, func(b *testing.B) {
			s := oniontest.NewServer(b)
			items := append([]any{Lookup, onion.BaseURL(s.URL()), onion.APIKey("k")}, tc.wire...)
			a, err := onion.NewAgent("bench", items...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				s.Add(oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)), oniontest.Text("a is known"))
				b.StartTimer()
				if _, err := a.Run(context.Background(), "what is a?"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestResponsesAPIIncompleteAndFailed: a response cut by its token limit
// is a reply with what it holds and the reason as its finish reason; one
// whose status is failed is an error with the server's words.
func TestResponsesAPIIncompleteAndFailed(t *testing.T) {
	const partial = `{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},` +
		`"output":[{"id":"msg_1","type":"message","status":"incomplete","content":[{"type":"output_text","text":"The answer is"}],"role":"assistant"}],` +
		`"usage":{"input_tokens":5,"output_tokens":16,"total_tokens":21}}`
	const failed = `{"id":"resp_2","object":"response","status":"failed","error":{"code":"server_error","message":"The model broke down."},"output":[]}`
	streamed := "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":" + partial + "}\n\n"
	s := oniontest.NewServer(t,
		oniontest.Replay("application/json", []byte(partial)),
		oniontest.Replay("text/event-stream", []byte(streamed)),
		oniontest.Replay("application/json", []byte(failed)),
	)
	m := responsesAgent(t, s).LanguageModel()
	req := &onion.Request{Model: "m", Messages: []onion.Message{{Role: onion.RoleUser, Content: "go"}}}
	for _, onDelta := range []func(onion.Delta){nil, func(onion.Delta) {}} {
		resp, err := m.Generate(context.Background(), req, onDelta)
		if err != nil || resp.Message.Content != "The answer is" || resp.FinishReason != "max_output_tokens" || resp.Usage.TotalTokens != 21 {
			t.Errorf("streamed %v: %+v, %v; want the partial text, finish reason max_output_tokens", onDelta != nil, resp, err)
		}
	}
	_, err := m.Generate(context.Background(), req, nil)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "server_error" || !strings.Contains(err.Error(), "The model broke down.") {
		t.Errorf("failed response: err = %v", err)
	}
}

// TestResponsesAPIOddEvents: an event of a kind the wire does not read is
// passed over whatever its shape; an error code may be a number; an event
// the wire reads in a shape it cannot read fails the request.
func TestResponsesAPIOddEvents(t *testing.T) {
	sse := func(events ...string) oniontest.Step {
		var b strings.Builder
		for _, e := range events {
			b.WriteString("data: " + e + "\n\n")
		}
		return oniontest.Replay("text/event-stream", []byte(b.String()))
	}
	const completed = `{"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"fine"}]}]}}`
	s := oniontest.NewServer(t,
		sse(`{"type":"response.audio.delta","delta":{"not":"a string"}}`, completed),
		sse(`{"type":"response.failed","response":{"status":"failed","error":{"code":500,"message":"boom"}}}`),
		sse(`{"type":"response.output_text.delta","delta":{"not":"a string"}}`, completed),
	)
	a := responsesAgent(t, s, onion.Retries(0))
	stream := func() (string, error) {
		var text strings.Builder
		var err error
		for e, e2 := range a.Stream(context.Background(), "go") {
			text.WriteString(e.Text)
			err = errors.Join(err, e2)
		}
		return text.String(), err
	}
	if text, err := stream(); err != nil || text != "fine" {
		t.Errorf("unknown event: text %q, err %v; want it passed over", text, err)
	}
	_, err := stream()
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || fmtAny(apiErr.Code) != "500" || apiErr.Message != "boom" {
		t.Errorf("failed with a numeric code: err = %v", err)
	}
	if _, err := stream(); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Errorf("unreadable delta: err = %v", err)
	}
}
