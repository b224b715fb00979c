package oniontest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// chat is a small request; stream also asks for the usage chunk.
func chat(stream bool, user string) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model:    "gpt-4.1",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: user}},
		Stream:   stream,
	}
	if stream {
		req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	return req
}

// post sends body to the server's chat endpoint with plain net/http and
// returns the response with its body read, and the error that ended the
// read, if any.
func post(t *testing.T, s *oniontest.Server, body string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// events decodes the data of every SSE event in body but [DONE].
func events(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(string(body)) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, m)
	}
	return out
}

// recv reads a stream to its end, failing the test on any error but io.EOF.
func recv(t *testing.T, stream *openai.ChatCompletionStream) []openai.ChatCompletionStreamResponse {
	t.Helper()
	defer stream.Close()
	var chunks []openai.ChatCompletionStreamResponse
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return chunks
		}
		if err != nil {
			t.Fatalf("after %d chunks: %v", len(chunks), err)
		}
		chunks = append(chunks, c)
	}
}

// assembled is a streamed answer put back together the way an agent loop
// does it: content concatenated, tool calls joined by index, or, when a
// delta has no index, by "a delta with an id starts a new call".
type assembled struct {
	content string
	calls   []openai.ToolCall
	finish  openai.FinishReason
	usage   *openai.Usage
	deltas  int // tool-call deltas seen
}

func assemble(chunks []openai.ChatCompletionStreamResponse) assembled {
	var a assembled
	for _, c := range chunks {
		if c.Usage != nil {
			a.usage = c.Usage
		}
		for _, ch := range c.Choices {
			a.content += ch.Delta.Content
			if ch.FinishReason != "" {
				a.finish = ch.FinishReason
			}
			for _, d := range ch.Delta.ToolCalls {
				a.deltas++
				i := len(a.calls) - 1
				switch {
				case d.Index != nil:
					i = *d.Index
				case d.ID != "":
					i = len(a.calls)
				}
				for len(a.calls) <= i {
					a.calls = append(a.calls, openai.ToolCall{})
				}
				call := &a.calls[i]
				call.ID += d.ID
				call.Type += d.Type
				call.Function.Name += d.Function.Name
				call.Function.Arguments += d.Function.Arguments
			}
		}
	}
	return a
}

func TestText(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Hello there."))
	resp, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 {
		t.Fatalf("choices = %+v, want one", resp.Choices)
	}
	c := resp.Choices[0]
	if c.Message.Role != "assistant" || c.Message.Content != "Hello there." || c.FinishReason != openai.FinishReasonStop {
		t.Errorf("choice = %+v, want assistant text %q with finish_reason stop", c, "Hello there.")
	}
	if resp.ID == "" || resp.Object != "chat.completion" || resp.Created == 0 || resp.Model != "gpt-4.1" {
		t.Errorf("id, object, created, model = %q, %q, %d, %q", resp.ID, resp.Object, resp.Created, resp.Model)
	}
	if u := resp.Usage; u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage = %+v, want small non-zero numbers that add up", u)
	}
}

func TestURLWorksAsBaseURL(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("ok"))
	if !strings.HasSuffix(s.URL(), "/v1") {
		t.Errorf("URL() = %q, want it to end in /v1", s.URL())
	}
	cfg := openai.DefaultConfig("another-key")
	cfg.BaseURL = s.URL()
	resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), chat(false, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "ok" {
		t.Errorf("content = %q, want %q", got, "ok")
	}
}

func TestToolCalls(t *testing.T) {
	step := oniontest.ToolCalls(
		oniontest.Call("get_weather", `{"city":"Paris","note":"<a & b>"}`),
		oniontest.ToolCall{ID: "mine", Name: "lookup", Arguments: `{"q":"ünïcödé ☂"}`},
		oniontest.Call("no_args", ""),
	)
	s := oniontest.NewServer(t, step, step)
	for _, wantIDs := range [][]string{{"call_1", "mine", "call_2"}, {"call_3", "mine", "call_4"}} {
		resp, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "weather?"))
		if err != nil {
			t.Fatal(err)
		}
		c := resp.Choices[0]
		if c.FinishReason != openai.FinishReasonToolCalls || c.Message.Content != "" {
			t.Errorf("finish_reason, content = %q, %q; want tool_calls and none", c.FinishReason, c.Message.Content)
		}
		want := []openai.ToolCall{
			{ID: wantIDs[0], Type: "function", Function: openai.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris","note":"<a & b>"}`}},
			{ID: wantIDs[1], Type: "function", Function: openai.FunctionCall{Name: "lookup", Arguments: `{"q":"ünïcödé ☂"}`}},
			{ID: wantIDs[2], Type: "function", Function: openai.FunctionCall{Name: "no_args"}},
		}
		if fmt.Sprint(c.Message.ToolCalls) != fmt.Sprint(want) {
			t.Errorf("tool calls =\n%+v\nwant\n%+v", c.Message.ToolCalls, want)
		}
	}
}

func TestWireShape(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("f", `{"a":1}`)))
	resp, body, err := post(t, s, `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	if got["object"] != "chat.completion" || got["model"] != "gpt-4.1" || got["id"] == "" {
		t.Errorf("object, model, id = %v, %v, %v", got["object"], got["model"], got["id"])
	}
	if _, ok := got["created"].(float64); !ok {
		t.Errorf("created = %v, want a number", got["created"])
	}
	choice := got["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if content, ok := msg["content"]; !ok || content != nil {
		t.Errorf("message.content = %v (present %v), want null beside tool calls", content, ok)
	}
	args := msg["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"]
	if args != `{"a":1}` {
		t.Errorf("arguments = %#v, want the JSON string %q", args, `{"a":1}`)
	}
	if choice["finish_reason"] != "tool_calls" {
		t.Errorf("finish_reason = %v", choice["finish_reason"])
	}
	if u, ok := got["usage"].(map[string]any); !ok || u["total_tokens"] == nil {
		t.Errorf("usage = %v", got["usage"])
	}
}

func TestWithUsage(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("a").WithUsage(123, 45), oniontest.Text("b").WithUsage(7, 8))
	resp, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if u := resp.Usage; u.PromptTokens != 123 || u.CompletionTokens != 45 || u.TotalTokens != 168 {
		t.Errorf("usage = %+v, want 123 + 45 = 168", u)
	}
	stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if u := assemble(recv(t, stream)).usage; u == nil || u.PromptTokens != 7 || u.CompletionTokens != 8 || u.TotalTokens != 15 {
		t.Errorf("streamed usage = %+v, want 7 + 8 = 15", u)
	}
}

func TestRateLimited(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.RateLimited(1500*time.Millisecond))
	_, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %#v, want *openai.APIError", err)
	}
	if apiErr.HTTPStatusCode != http.StatusTooManyRequests || apiErr.Code != "rate_limit_exceeded" || apiErr.Type != "requests" {
		t.Errorf("APIError = %+v, want 429 rate_limit_exceeded of type requests", apiErr)
	}

	for _, tc := range []struct {
		after time.Duration
		want  string
	}{
		{1500 * time.Millisecond, "2"},
		{2 * time.Second, "2"},
		{time.Millisecond, "1"},
		{0, "0"},
	} {
		s.Add(oniontest.RateLimited(tc.after))
		resp, _, err := post(t, s, `{"model":"m","messages":[]}`)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("Retry-After"); resp.StatusCode != http.StatusTooManyRequests || got != tc.want {
			t.Errorf("RateLimited(%v): status %d, Retry-After %q; want 429, %q", tc.after, resp.StatusCode, got, tc.want)
		}
	}
}

func TestError(t *testing.T) {
	body, err := os.ReadFile("testdata/fixtures/openai/error_400_unsupported_value.json")
	if err != nil {
		t.Fatal(err)
	}
	step := oniontest.Error(http.StatusBadRequest, string(body))
	s := oniontest.NewServer(t, step, step)

	check := func(err error) {
		t.Helper()
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("err = %#v, want *openai.APIError", err)
		}
		if apiErr.HTTPStatusCode != 400 || apiErr.Code != "unsupported_value" || apiErr.Type != "invalid_request_error" ||
			apiErr.Param == nil || *apiErr.Param != "messages[0].role" {
			t.Errorf("APIError = %+v, want the recorded 400", apiErr)
		}
	}
	_, err = s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	check(err)
	_, err = s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
	check(err)
}

func TestCutAfter(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.Text("one two three four five").CutAfter(3))
		stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		var got int
		for ; ; got++ {
			if _, err = stream.Recv(); err != nil {
				break
			}
		}
		if got != 3 || errors.Is(err, io.EOF) {
			t.Errorf("got %d chunks, then %v; want 3 chunks, then an error that is not io.EOF", got, err)
		}
	})
	t.Run("non-stream", func(t *testing.T) {
		cut := oniontest.Text("a complete answer").CutAfter(0)
		s := oniontest.NewServer(t, cut, cut)
		_, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
		var apiErr *openai.APIError
		if err == nil || errors.As(err, &apiErr) {
			t.Errorf("err = %v, want a transport or decoding error", err)
		}
		_, body, err := post(t, s, `{"model":"m","messages":[]}`)
		if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(string(body), `{"id":"chatcmpl-`) {
			t.Errorf("read %q, then %v; want the first half of the body, then io.ErrUnexpectedEOF", body, err)
		}
	})
	t.Run("replay", func(t *testing.T) {
		file, err := os.ReadFile("testdata/fixtures/openai/chat_stream_text.sse")
		if err != nil {
			t.Fatal(err)
		}
		s := oniontest.NewServer(t, oniontest.Replay("text/event-stream", file).CutAfter(2))
		_, body, err := post(t, s, `{"model":"m","messages":[],"stream":true}`)
		want := strings.Join(strings.SplitAfterN(string(file), "\n\n", 3)[:2], "")
		if string(body) != want || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read %q, then %v; want the first two events, then io.ErrUnexpectedEOF", body, err)
		}
	})
}

func TestDelay(t *testing.T) {
	t.Run("waits", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.Text("late").Delay(100*time.Millisecond))
		start := time.Now()
		resp, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 100*time.Millisecond || resp.Choices[0].Message.Content != "late" {
			t.Errorf("answer %q after %v, want %q after at least 100ms", resp.Choices[0].Message.Content, d, "late")
		}
	})
	t.Run("client cancels", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.Text("never").Delay(time.Hour))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := s.Client().CreateChatCompletion(ctx, chat(false, "hi"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
		s.Close()
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("call and Close took %v, want them to end with the context", d)
		}
	})
	t.Run("server closes", func(t *testing.T) {
		started := make(chan struct{})
		s := oniontest.NewServer(t, oniontest.Func(func(oniontest.Request) oniontest.Step {
			close(started)
			return oniontest.Text("never")
		}).Delay(time.Hour))
		errc := make(chan error, 1)
		go func() {
			_, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
			errc <- err
		}()
		<-started
		start := time.Now()
		s.Close()
		s.Close() // a second Close is harmless
		if err := <-errc; err == nil {
			t.Error("the delayed call succeeded, want an error once the server is closed")
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Close took %v with a delayed reply in flight", d)
		}
	})
}

func TestRequestsRecorded(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("a"), oniontest.Text("b"))
	req := chat(false, "What is the weather?")
	req.Messages = append([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: "Be brief."}}, req.Messages...)
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`),
	}}}
	if _, err := s.Client().CreateChatCompletion(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "again"))
	if err != nil {
		t.Fatal(err)
	}
	recv(t, stream)

	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded, want 2", len(reqs))
	}
	first := reqs[0]
	if len(first.Body.Messages) != 2 || first.Body.Messages[0].Content != "Be brief." || first.Body.Messages[1].Content != "What is the weather?" {
		t.Errorf("messages = %+v", first.Body.Messages)
	}
	if len(first.Body.Tools) != 1 || first.Body.Tools[0].Function.Name != "get_weather" {
		t.Errorf("tools = %+v", first.Body.Tools)
	}
	if first.Stream || !reqs[1].Stream || reqs[1].Body.Messages[0].Content != "again" {
		t.Errorf("Stream = %v, %v; want false, true", first.Stream, reqs[1].Stream)
	}
	if got := first.Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("Authorization = %q", got)
	}
	if !json.Valid(first.Raw) || !bytes.Contains(first.Raw, []byte(`"name":"get_weather"`)) {
		t.Errorf("Raw = %s", first.Raw)
	}
}

func TestBadBody(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("first"))
	resp, body, err := post(t, s, `{not json`)
	if err != nil {
		t.Fatal(err)
	}
	var e openai.ErrorResponse
	if resp.StatusCode != 400 || json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Type != "invalid_request_error" {
		t.Errorf("status %d, body %s; want 400 with an OpenAI error", resp.StatusCode, body)
	}
	if reqs := s.Requests(); len(reqs) != 1 || string(reqs[0].Raw) != `{not json` {
		t.Errorf("requests = %+v, want the raw bad body recorded", reqs)
	}
	got, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	if err != nil || got.Choices[0].Message.Content != "first" {
		t.Errorf("next request: %v, %v; want the first step, which the bad body did not use", got, err)
	}
}

func TestNotFound(t *testing.T) {
	s := oniontest.NewServer(t)
	base := strings.TrimSuffix(s.URL(), "/v1")
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/chat/completions"},
		{"POST", "/v1/completions"},
		{"GET", "/v1/models"},
		{"POST", "/chat/completions"},
	} {
		req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e openai.ErrorResponse
		if resp.StatusCode != 404 || json.Unmarshal(body, &e) != nil || e.Error == nil ||
			e.Error.Message != fmt.Sprintf("Invalid URL (%s %s)", tc.method, tc.path) {
			t.Errorf("%s %s: status %d, body %s; want 404 with an OpenAI error", tc.method, tc.path, resp.StatusCode, body)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests recorded, want none", n)
	}
}

func TestFunc(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Func(func(r oniontest.Request) oniontest.Step {
		last := r.Body.Messages[len(r.Body.Messages)-1].Content
		return oniontest.Text("you said: " + last)
	}).WithUsage(3, 4))
	resp, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "ping"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "you said: ping" || resp.Usage.TotalTokens != 7 {
		t.Errorf("reply %q with usage %+v, want %q and the Func step's usage", got, resp.Usage, "you said: ping")
	}
}

func TestConcurrentRequests(t *testing.T) {
	const n = 20
	echo := oniontest.Func(func(r oniontest.Request) oniontest.Step {
		return oniontest.Text(r.Body.Messages[0].Content)
	})
	s := oniontest.NewServer(t)
	for range n {
		s.Add(echo)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			msg := fmt.Sprint("message ", i)
			resp, err := s.Client().CreateChatCompletion(context.Background(), chat(false, msg))
			if err != nil {
				t.Error(err)
				return
			}
			if got := resp.Choices[0].Message.Content; got != msg {
				t.Errorf("reply %q, want %q", got, msg)
			}
		})
	}
	wg.Wait()
	if got := len(s.Requests()); got != n {
		t.Errorf("%d requests recorded, want %d", got, n)
	}
}

func TestToolResults(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("done"))
	req := chat(false, "go")
	req.Messages = append(req.Messages,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{
			{ID: "a", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "f", Arguments: "{}"}},
			{ID: "b", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "f", Arguments: "{}"}},
		}},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "a", Content: "one"},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "b", Content: "two"},
	)
	if _, err := s.Client().CreateChatCompletion(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := s.Requests()[0].ToolResults()
	if len(got) != 2 || got[0].ToolCallID != "a" || got[0].Content != "one" || got[1].Content != "two" {
		t.Errorf("ToolResults = %+v", got)
	}
	if n := len(oniontest.Request{}.ToolResults()); n != 0 {
		t.Errorf("an empty request has %d tool results", n)
	}
}
