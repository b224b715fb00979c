package oniontest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
)

// respRequest is a small Responses request with one function tool.
func respRequest(user string) openai.CreateResponseRequest {
	return openai.CreateResponseRequest{
		Model: "gpt-5",
		Input: []any{openai.ResponseInputMessage{Role: "user", Content: user}},
		Tools: []openai.ResponseTool{openai.NewResponseFunctionTool(openai.FunctionDefinition{
			Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)})},
	}
}

// recvEvents reads a Responses stream to its end, failing the test on any
// error but io.EOF.
func recvEvents(t *testing.T, stream *openai.ResponseStream) []openai.ResponseStreamEvent {
	t.Helper()
	defer stream.Close()
	var evs []openai.ResponseStreamEvent
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatalf("after %d events: %v", len(evs), err)
		}
		evs = append(evs, ev)
	}
}

// postResponses sends body to /v1/responses with plain net/http.
func postResponses(t *testing.T, s *oniontest.Server, body string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// outputItems decodes a response's output as go-openai's item type.
func outputItems(t *testing.T, out []any) []openai.ResponseOutputItem {
	t.Helper()
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var items []openai.ResponseOutputItem
	if err := json.Unmarshal(b, &items); err != nil {
		t.Fatal(err)
	}
	return items
}

func TestResponsesText(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Hello there.").WithUsage(12, 3))
	resp, err := s.Client().CreateResponse(context.Background(), respRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Object != "response" || resp.Status != openai.ResponseStatusCompleted || resp.Model != "gpt-5" || !strings.HasPrefix(resp.ID, "resp_") {
		t.Errorf("object %q, status %q, model %q, id %q", resp.Object, resp.Status, resp.Model, resp.ID)
	}
	if got := resp.GetOutputText(); got != "Hello there." {
		t.Errorf("output text = %q", got)
	}
	items := outputItems(t, resp.Output)
	if len(items) != 1 || items[0].Type != "message" || items[0].Role != "assistant" || !strings.HasPrefix(items[0].ID, "msg_") {
		t.Errorf("output = %+v, want one assistant message", items)
	}
	if u := resp.Usage; u == nil || u.InputTokens != 12 || u.OutputTokens != 3 || u.TotalTokens != 15 {
		t.Errorf("usage = %+v, want 12 + 3 = 15", u)
	}
}

func TestResponsesToolCalls(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`), oniontest.ToolCall{ID: "mine", Name: "get_time", Arguments: `{}`}),
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Oslo"}`)),
	)
	resp, err := s.Client().CreateResponse(context.Background(), respRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	items := outputItems(t, resp.Output)
	if len(items) != 2 {
		t.Fatalf("output = %+v, want two function calls", items)
	}
	for i, want := range []openai.ResponseOutputItem{
		{Type: "function_call", Status: "completed", CallID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		{Type: "function_call", Status: "completed", CallID: "mine", Name: "get_time", Arguments: `{}`},
	} {
		got := items[i]
		if !strings.HasPrefix(got.ID, "fc_") || got.ID == got.CallID {
			t.Errorf("item %d id %q: want an fc_ id apart from the call_id", i, got.ID)
		}
		got.ID = ""
		if !reflectEqual(got, want) {
			t.Errorf("item %d = %+v, want %+v", i, got, want)
		}
	}
	resp, err = s.Client().CreateResponse(context.Background(), respRequest("again"))
	if err != nil {
		t.Fatal(err)
	}
	if items := outputItems(t, resp.Output); len(items) != 1 || items[0].CallID != "call_2" {
		t.Errorf("second response = %+v, want call_2: ids are unique per server", items)
	}
}

func reflectEqual(a, b openai.ResponseOutputItem) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestResponsesStreamText(t *testing.T) {
	const text = "The quick brown fox jumps over the lazy dog."
	s := oniontest.NewServer(t, oniontest.Text(text))
	stream, err := s.Client().CreateResponseStream(context.Background(), respRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	evs := recvEvents(t, stream)
	var types []string
	var deltas strings.Builder
	for i, ev := range evs {
		if ev.SequenceNumber != i {
			t.Errorf("event %d (%s) has sequence_number %d", i, ev.Type, ev.SequenceNumber)
		}
		if ev.Type == openai.ResponseStreamEventOutputTextDelta {
			deltas.WriteString(ev.Delta)
			continue
		}
		types = append(types, string(ev.Type))
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if !slices.Equal(types, want) {
		t.Errorf("events = %q, want %q around the deltas", types, want)
	}
	if deltas.String() != text || len(evs)-len(want) != len(strings.Fields(text)) {
		t.Errorf("%d deltas make %q, want one per word making %q", len(evs)-len(want), deltas.String(), text)
	}
	if r := evs[0].Response; r == nil || r.Status != openai.ResponseStatusInProgress || r.Usage != nil || len(r.Output) != 0 {
		t.Errorf("response.created carries %+v, want an empty response in progress with no usage", r)
	}
	last := evs[len(evs)-1].Response
	if last == nil || last.Status != openai.ResponseStatusCompleted || last.GetOutputText() != text || last.Usage == nil || last.Usage.TotalTokens != 15 {
		t.Errorf("response.completed carries %+v, want the whole text and the usage", last)
	}
}

func TestResponsesStreamToolCalls(t *testing.T) {
	calls := []oniontest.ToolCall{oniontest.Call("get_weather", `{"city":"Zürich","days":3}`), oniontest.Call("get_time", `{}`)}
	for _, tc := range []struct {
		name       string
		step       oniontest.Step
		wantDeltas bool
	}{
		{"fragments", oniontest.ToolCalls(calls...), true},
		{"whole", oniontest.ToolCalls(calls...).Whole(), false},
		{"no index changes nothing", oniontest.ToolCalls(calls...).NoIndex(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := oniontest.NewServer(t, tc.step)
			stream, err := s.Client().CreateResponseStream(context.Background(), respRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			args := map[int]string{}
			done := map[int]openai.ResponseOutputItem{}
			deltas := 0
			for _, ev := range recvEvents(t, stream) {
				switch ev.Type {
				case openai.ResponseStreamEventFunctionArgumentsDelta:
					deltas++
					args[ev.OutputIndex] += ev.Delta
				case openai.ResponseStreamEventFunctionArgumentsDone:
					if tc.wantDeltas && args[ev.OutputIndex] != ev.Arguments {
						t.Errorf("deltas at %d make %q, done says %q", ev.OutputIndex, args[ev.OutputIndex], ev.Arguments)
					}
				case openai.ResponseStreamEventOutputItemDone:
					done[ev.OutputIndex] = *ev.Item
				}
			}
			if (deltas > 0) != tc.wantDeltas {
				t.Errorf("%d argument deltas, want some: %v", deltas, tc.wantDeltas)
			}
			for i, c := range calls {
				item := done[i]
				if item.Type != "function_call" || item.Name != c.Name || item.Arguments != c.Arguments || item.CallID == "" || item.Status != "completed" {
					t.Errorf("output_item.done %d = %+v, want %+v", i, item, c)
				}
			}
		})
	}
}

// keyOrder returns the keys of the JSON object data, in order.
func keyOrder(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", data)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// shapes maps each event type, and each object inside an event ("<type>
// response", "<type> item <item type>"), to the order of its keys.
func shapes(t *testing.T, stream []byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for line := range strings.Lines(string(stream)) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string          `json:"type"`
			Response json.RawMessage `json:"response"`
			Item     json.RawMessage `json:"item"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%v in %s", err, data)
		}
		out[ev.Type] = keyOrder(t, []byte(data))
		if ev.Response != nil {
			out[ev.Type+" response"] = keyOrder(t, ev.Response)
		}
		if ev.Item != nil {
			var item struct{ Type string }
			_ = json.Unmarshal(ev.Item, &item)
			out[ev.Type+" item "+item.Type] = keyOrder(t, ev.Item)
		}
	}
	return out
}

// TestResponsesWireShape checks that every event and object the server
// streams has only keys that api.openai.com sends, in the order it sends
// them (the recordings carry more keys, such as obfuscation).
func TestResponsesWireShape(t *testing.T) {
	var recorded = map[string][]string{}
	for _, f := range []string{"openai_stream_text.sse", "openai_stream_text_then_function_call.sse"} {
		b, err := os.ReadFile(filepath.Join("testdata", "fixtures", "responses", f))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range shapes(t, b) {
			recorded[k] = v
		}
	}
	s := oniontest.NewServer(t, oniontest.Text("Hello there."), oniontest.ToolCalls(oniontest.Call("f", `{"a":1}`)))
	for range 2 {
		resp, body, err := postResponses(t, s, `{"model":"gpt-5","input":"hi","stream":true}`)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type = %q", ct)
		}
		if !strings.HasPrefix(string(body), "event: response.created\ndata: {") {
			t.Errorf("stream starts %.40q, want an event: line, then data", body)
		}
		for what, keys := range shapes(t, body) {
			want, ok := recorded[what]
			if !ok {
				t.Errorf("%s: not in the recordings", what)
				continue
			}
			var kept []string // the recorded keys we send, in the recorded order
			for _, k := range want {
				if slices.Contains(keys, k) {
					kept = append(kept, k)
				}
			}
			if !slices.Equal(keys, kept) {
				t.Errorf("%s keys = %q, want a subsequence of %q", what, keys, want)
			}
		}
	}
}

func TestResponsesJSONShape(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("f", `{"a":1}`)))
	resp, body, err := postResponses(t, s, `{"model":"gpt-5","input":"hi","store":false}`)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/json" {
		t.Errorf("status %d, Content-Type %q", resp.StatusCode, ct)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	for _, k := range []string{"error", "incomplete_details", "previous_response_id", "user", "instructions"} {
		if v, ok := got[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if got["store"] != false || got["status"] != "completed" || got["object"] != "response" {
		t.Errorf("store %v, status %v, object %v; want the request's store:false echoed", got["store"], got["status"], got["object"])
	}
	item := got["output"].([]any)[0].(map[string]any)
	if item["arguments"] != `{"a":1}` || item["call_id"] != "call_1" {
		t.Errorf("item = %v, want arguments as a JSON string", item)
	}
}

func TestResponsesRequestRecorded(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("a"), oniontest.Text("b"))
	store := false
	req := openai.CreateResponseRequest{
		Model:        "gpt-5",
		Instructions: "Be brief.",
		Store:        &store,
		Include:      []openai.ResponseInclude{openai.ResponseIncludeReasoningEncryptedContent},
		Input: []any{
			openai.ResponseInputMessage{Role: "user", Content: "Weather in Paris and Oslo?"},
			map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}, "encrypted_content": "opaque"},
			openai.ResponseInputMessage{Type: "message", Role: "assistant", Content: []openai.ResponseInputText{{Type: "output_text", Text: "Looking."}}},
			map[string]any{"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": `{"city":"Paris"}`},
			map[string]any{"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": `{"city":"Oslo"}`},
			openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: "c1", Output: "sunny"},
			openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: "c2", Output: "rain"},
		},
		Tools: respRequest("").Tools,
	}
	if _, err := s.Client().CreateResponse(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	stream, err := s.Client().CreateResponseStream(context.Background(), openai.CreateResponseRequest{Model: "m", Input: "again", PreviousResponseID: "resp_1"})
	if err != nil {
		t.Fatal(err)
	}
	recvEvents(t, stream)

	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Responses == nil || reqs[1].Responses == nil {
		t.Fatalf("requests = %+v, want two decoded Responses requests", reqs)
	}
	rr := reqs[0].Responses
	if rr.Model != "gpt-5" || rr.Instructions != "Be brief." || rr.Store == nil || *rr.Store || !slices.Equal(rr.Include, []string{"reasoning.encrypted_content"}) || len(rr.Tools) != 1 {
		t.Errorf("decoded = %+v", rr)
	}
	var types []string
	for _, it := range rr.Input {
		types = append(types, it.Type)
	}
	if want := []string{"message", "reasoning", "message", "function_call", "function_call", "function_call_output", "function_call_output"}; !slices.Equal(types, want) {
		t.Errorf("input types = %q, want %q", types, want)
	}
	if it := rr.Input[1]; it.ID != "rs_1" || !bytes.Contains(it.Raw, []byte(`"encrypted_content":"opaque"`)) {
		t.Errorf("reasoning item = %+v, want it kept as sent", it)
	}
	if it := rr.Input[2]; it.Role != "assistant" || it.Text != "Looking." {
		t.Errorf("assistant item = %+v, want the text of its parts", it)
	}

	// The same conversation in Chat Completions terms.
	msgs := reqs[0].Body.Messages
	if len(msgs) != 5 || msgs[0].Role != "system" || msgs[0].Content != "Be brief." || msgs[1].Content != "Weather in Paris and Oslo?" {
		t.Fatalf("messages = %+v", msgs)
	}
	if a := msgs[2]; a.Role != "assistant" || a.Content != "Looking." || len(a.ToolCalls) != 2 || a.ToolCalls[1].ID != "c2" || a.ToolCalls[1].Function.Arguments != `{"city":"Oslo"}` {
		t.Errorf("assistant message = %+v, want the text and both calls", a)
	}
	results := reqs[0].ToolResults()
	if len(results) != 2 || results[0].ToolCallID != "c1" || results[0].Content != "sunny" || results[0].Name != "get_weather" || results[1].Content != "rain" {
		t.Errorf("ToolResults = %+v", results)
	}
	if tools := reqs[0].Body.Tools; len(tools) != 1 || tools[0].Function.Name != "get_weather" {
		t.Errorf("tools = %+v", tools)
	}
	second := reqs[1]
	if !second.Stream || second.Responses.PreviousResponseID != "resp_1" || len(second.Body.Messages) != 1 || second.Body.Messages[0].Content != "again" {
		t.Errorf("second request: stream %v, %+v", second.Stream, second.Responses)
	}
}

func TestResponsesRateLimitedAndError(t *testing.T) {
	body, err := os.ReadFile("testdata/fixtures/responses/openai_error_400_model_not_found.json")
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.RateLimited(2*time.Second), oniontest.Error(400, string(body)), oniontest.Error(400, string(body)))
	_, err = s.Client().CreateResponse(context.Background(), respRequest("hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
		t.Errorf("err = %v, want a 429 *openai.APIError", err)
	}
	_, err = s.Client().CreateResponse(context.Background(), respRequest("hi"))
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Code != "model_not_found" {
		t.Errorf("err = %v, want the recorded 400", err)
	}
	_, err = s.Client().CreateResponseStream(context.Background(), respRequest("hi"))
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
		t.Errorf("streamed: err = %v, want the recorded 400", err)
	}
	s.Add(oniontest.RateLimited(1500 * time.Millisecond))
	resp, _, err := postResponses(t, s, `{"model":"m","input":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("status %d, Retry-After %q; want 429, 2", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func TestStreamError(t *testing.T) {
	const msg = "The server had an error while processing your request."
	t.Run("responses stream", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.StreamError("server_error", msg))
		stream, err := s.Client().CreateResponseStream(context.Background(), respRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		evs := recvEvents(t, stream)
		for _, ev := range evs {
			types = append(types, string(ev.Type))
		}
		if want := []string{"response.created", "response.in_progress", "error", "response.failed"}; !slices.Equal(types, want) {
			t.Fatalf("events = %q, want %q", types, want)
		}
		if e := evs[2].Error; e == nil || e.Code != "server_error" || e.Message != msg {
			t.Errorf("error event = %s", evs[2].Raw)
		}
		if r := evs[3].Response; r.Status != openai.ResponseStatusFailed || r.Error == nil || r.Error.Code != "server_error" {
			t.Errorf("response.failed = %s", evs[3].Raw)
		}
	})
	t.Run("chat stream", func(t *testing.T) {
		s := oniontest.NewServer(t, oniontest.StreamError("server_error", msg))
		stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		first, err := stream.Recv()
		if err != nil || first.Choices[0].Delta.Role != "assistant" {
			t.Fatalf("first chunk %+v, %v; want the assistant's role", first, err)
		}
		_, err = stream.Recv()
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.Message != msg || apiErr.Code != "server_error" {
			t.Errorf("then err = %v, want the error chunk as *openai.APIError", err)
		}
	})
	t.Run("not streamed", func(t *testing.T) {
		step := oniontest.StreamError("server_error", msg)
		s := oniontest.NewServer(t, step, step)
		_, err := s.Client().CreateResponse(context.Background(), respRequest("hi"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Message != msg {
			t.Errorf("responses: err = %v, want a 500 *openai.APIError", err)
		}
		_, err = s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Code != "server_error" {
			t.Errorf("chat: err = %v, want a 500 *openai.APIError", err)
		}
	})
}

func TestResponsesCutAfter(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("one two three four five").CutAfter(4), oniontest.Text("a complete answer").CutAfter(0))
	stream, err := s.Client().CreateResponseStream(context.Background(), respRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var got []string
	for {
		ev, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				t.Errorf("the cut stream ended with io.EOF")
			}
			break
		}
		got = append(got, string(ev.Type))
	}
	if len(got) != 4 || slices.Contains(got, "response.completed") {
		t.Errorf("events = %q, want the first 4 and no response.completed", got)
	}
	_, body, err := postResponses(t, s, `{"model":"m","input":"hi"}`)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(string(body), `{"id":"resp_`) {
		t.Errorf("read %q, then %v; want half the body, then io.ErrUnexpectedEOF", body, err)
	}
}

func TestResponsesFuncAndDelay(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Func(func(r oniontest.Request) oniontest.Step {
		if r.Responses == nil {
			return oniontest.Text("not a Responses request")
		}
		return oniontest.Text("you said: " + r.Body.Messages[len(r.Body.Messages)-1].Content)
	}).Delay(20*time.Millisecond), oniontest.Text("never").Delay(time.Hour))
	resp, err := s.Client().CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "m", Input: "ping"})
	if err != nil || resp.GetOutputText() != "you said: ping" {
		t.Errorf("reply %q, %v", resp.GetOutputText(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Client().CreateResponseStream(ctx, respRequest("hi")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the delayed reply to end with the caller's context", err)
	}
}

func TestResponsesBadBody(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("first"))
	for _, body := range []string{`{not json`, `{"input":[1]}`, `{"input":{"a":1}}`} {
		resp, b, err := postResponses(t, s, body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 400 || !bytes.Contains(b, []byte("/v1/responses")) {
			t.Errorf("%s: status %d, body %s; want 400 naming the endpoint", body, resp.StatusCode, b)
		}
	}
	resp, err := s.Client().CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "m", Input: "hi"})
	if err != nil || resp.GetOutputText() != "first" {
		t.Errorf("next request: %v, %v; want the first step, unused by the bad bodies", resp.GetOutputText(), err)
	}
}

// TestResponsesRefusesBrokenConversations: like api.openai.com, the
// server refuses a stateless conversation whose calls and outputs do not
// pair up, or whose reasoning item has nothing after it, with a 400 that
// uses no step.
func TestResponsesRefusesBrokenConversations(t *testing.T) {
	recorded, err := os.ReadFile("testdata/fixtures/responses/openai_error_400_reasoning_without_following_item.json")
	if err != nil {
		t.Fatal(err)
	}
	var want openai.ErrorResponse
	if err := json.Unmarshal(recorded, &want); err != nil {
		t.Fatal(err)
	}
	user := openai.ResponseInputMessage{Role: "user", Content: "hi"}
	call := map[string]any{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
	output := func(id string) any {
		return openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: id, Output: "ok"}
	}
	reasoning := map[string]any{"type": "reasoning", "id": "rs_68c42de022c881948db7ed1cc2529f2e0202c9ad459e0d23", "summary": []any{}}
	s := oniontest.NewServer(t, oniontest.Text("served"))
	for _, tc := range []struct {
		name  string
		input []any
		want  string
	}{
		{"an output without its call", []any{user, output("c9")}, "No tool call found for function call output with call_id c9."},
		{"a call without its output", []any{user, call, output("c1"), map[string]any{"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"}},
			"No tool output found for function call c2."},
		{"reasoning with nothing after it", []any{user, reasoning}, want.Error.Message},
	} {
		_, err := s.Client().CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "m", Input: tc.input})
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Message != tc.want || apiErr.Type != "invalid_request_error" ||
			apiErr.Param == nil || *apiErr.Param != "input" {
			t.Errorf("%s: err = %#v, want a 400 saying %q", tc.name, err, tc.want)
		}
	}
	if reqs := s.Requests(); len(reqs) != 3 || reqs[2].Responses == nil || len(reqs[2].Responses.Input) != 2 {
		t.Errorf("requests = %d, want the refused ones recorded, decoded", len(reqs))
	}
	// On a stored conversation the outputs may answer calls of the previous response.
	resp, err := s.Client().CreateResponse(context.Background(), openai.CreateResponseRequest{Model: "m", Input: []any{output("c1")}, PreviousResponseID: "resp_1"})
	if err != nil || resp.GetOutputText() != "served" {
		t.Errorf("chained request: %q, %v; want the step, which the refusals did not use", resp.GetOutputText(), err)
	}
}
