package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// compat replays a recorded reply of an OpenAI-compatible server (the
// copies under oniontest/testdata/fixtures, each with its source in the
// README there).
func compat(t *testing.T, name string) oniontest.Step {
	return oniontest.ReplayFile(t, filepath.Join("..", "oniontest", "testdata", "fixtures", "compat", name))
}

// sentAssistant is the assistant message of the raw request body, as sent.
func sentAssistant(t *testing.T, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var body struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	for _, m := range body.Messages {
		if string(m["role"]) == `"assistant"` {
			return m
		}
	}
	t.Fatal("no assistant message was sent")
	return nil
}

// throughJSON is m after a trip through JSON, as a State keeps it.
func throughJSON(t *testing.T, m loop.Message) loop.Message {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back loop.Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// TestReasoningMember: servers that send their reasoning in a "reasoning"
// member (Groq, streamed; Ollama, whole) have it read, and get it back
// in that member, not in reasoning_content, which Groq does not take.
func TestReasoningMember(t *testing.T) {
	for _, tc := range []struct {
		file   string
		stream bool
		starts string
	}{
		{"groq_stream_tool_call.sse", true, "We need"},
		{"ollama_v1_chat_tool_call.json", false, "The conversation: user asked"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := oniontest.NewServer(t, compat(t, tc.file), oniontest.Text("done"))
			m := newModel(t, s)
			var deltas strings.Builder
			var onDelta func(loop.Delta)
			if tc.stream {
				onDelta = func(d loop.Delta) { deltas.WriteString(d.Reasoning) }
			}
			msgs := []loop.Message{userMessage("go")}
			resp, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: msgs, Tools: testTools}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			r := resp.Message.Reasoning
			if !strings.HasPrefix(r, tc.starts) || len(resp.Message.ToolCalls) != 1 {
				t.Fatalf("reasoning %q, calls %+v", r, resp.Message.ToolCalls)
			}
			if tc.stream && deltas.String() != r {
				t.Errorf("reasoning deltas %q, want the message's %q", deltas.String(), r)
			}
			// The message survives the State's JSON.
			back := throughJSON(t, resp.Message)
			c := back.ToolCalls[0]
			msgs = append(msgs, back, loop.Message{Role: loop.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: "ok"})
			if _, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: msgs, Tools: testTools}, nil); err != nil {
				t.Fatal(err)
			}
			sent := sentAssistant(t, s.Requests()[1].Raw)
			var got string
			if err := json.Unmarshal(sent["reasoning"], &got); err != nil || got != r {
				t.Errorf("reasoning sent back = %s, want the reply's", sent["reasoning"])
			}
			if _, ok := sent["reasoning_content"]; ok {
				t.Error("reasoning_content was sent too")
			}
		})
	}
}

// TestReasoningContentMember: reasoning that came in reasoning_content
// (DeepSeek, llama.cpp) goes back in it.
func TestReasoningContentMember(t *testing.T) {
	msgs := []loop.Message{userMessage("go"),
		{Role: loop.RoleAssistant, Reasoning: "think", ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "count", Arguments: "{}"}}},
		{Role: loop.RoleTool, ToolCallID: "c1", Name: "count", Content: "3"}}
	// A hostile or foreign Items names no other member.
	odd := msgs[1]
	odd.ItemsFrom, odd.Items = chatItemsFrom, json.RawMessage(`{"reasoning_field":"role"}`)
	for _, a := range []loop.Message{msgs[1], odd} {
		s := oniontest.NewServer(t, oniontest.Text("done"))
		m := newModel(t, s)
		in := []loop.Message{msgs[0], a, msgs[2]}
		if _, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: in, Tools: testTools}, nil); err != nil {
			t.Fatal(err)
		}
		sent := sentAssistant(t, s.Requests()[0].Raw)
		if string(sent["reasoning_content"]) != `"think"` || sent["reasoning"] != nil {
			t.Errorf("assistant message sent = %s", sent)
		}
	}
}

// signedReply is a reply of Gemini 3 through Gemini's OpenAI-compatible
// endpoint, in the shape Google documents: each tool call carries its
// thought signature in extra_content, and the next request must carry it
// back on that call ("Function call is missing a thought_signature").
const (
	signedWhole = `{"id":"r1","object":"chat.completion","model":"gemini-3-pro-preview","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[` +
		`{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"key\":\"a\"}"},"extra_content":{"google":{"thought_signature":"EoYCCoMCAR=="}}},` +
		`{"id":"c2","type":"function","function":{"name":"count","arguments":"{}"}}]}}]}`
	signedStream = `data: {"id":"r1","object":"chat.completion.chunk","model":"gemini-3-pro-preview","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[` +
		`{"index":0,"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"key\":\"a\"}"},"extra_content":{"google":{"thought_signature":"EoYCCoMCAR=="}}}]}}]}` + "\n\n" +
		`data: {"id":"r1","object":"chat.completion.chunk","model":"gemini-3-pro-preview","choices":[{"index":0,"delta":{"tool_calls":[` +
		`{"index":1,"id":"c2","type":"function","function":{"name":"count","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"
)

// TestToolCallExtraContent: a tool call's extra_content comes back on
// that call in the next request, as it came, streamed or whole and
// through the State's JSON; a call without one gets none.
func TestToolCallExtraContent(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[stream], func(t *testing.T) {
			var bodies [][]byte
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				bodies = append(bodies, b)
				switch {
				case len(bodies) > 1:
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"id":"r2","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"done"}}]}`)
				case stream:
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, signedStream)
				default:
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, signedWhole)
				}
			}))
			defer s.Close()
			m, err := New(BaseURL(s.URL+"/v1"), APIKey("k"))
			if err != nil {
				t.Fatal(err)
			}
			var onDelta func(loop.Delta)
			if stream {
				onDelta = func(loop.Delta) {}
			}
			msgs := []loop.Message{userMessage("go")}
			resp, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: msgs, Tools: testTools}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Message.ToolCalls) != 2 {
				t.Fatalf("calls %+v", resp.Message.ToolCalls)
			}
			back := throughJSON(t, resp.Message)
			msgs = append(msgs, back)
			for _, c := range back.ToolCalls {
				msgs = append(msgs, loop.Message{Role: loop.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: "ok"})
			}
			if _, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: msgs, Tools: testTools}, nil); err != nil {
				t.Fatal(err)
			}
			var sent struct {
				Messages []struct {
					ToolCalls []map[string]json.RawMessage `json:"tool_calls"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(bodies[1], &sent); err != nil {
				t.Fatal(err)
			}
			calls := sent.Messages[1].ToolCalls
			if len(calls) != 2 || string(calls[0]["extra_content"]) != `{"google":{"thought_signature":"EoYCCoMCAR=="}}` {
				t.Fatalf("the first call went back as %s", calls)
			}
			if _, ok := calls[1]["extra_content"]; ok {
				t.Errorf("the second call, which had none, went back with extra_content %s", calls[1]["extra_content"])
			}
		})
	}
}

// TestToolCallExtraContentFromOutside: Items restored from outside send
// back only an extra_content that is a JSON object of a bounded size.
func TestToolCallExtraContentFromOutside(t *testing.T) {
	big := `{"google":{"thought_signature":"` + strings.Repeat("A", maxExtraBytes) + `"}}`
	for _, x := range []string{`"a string"`, `[1,2]`, `{"broken":`, big} {
		items, _ := json.Marshal(map[string]any{"tool_call_extra": []json.RawMessage{json.RawMessage(x)}})
		if !json.Valid(items) {
			items = []byte(`{"tool_call_extra":[` + x + `]}`)
		}
		msgs := []loop.Message{userMessage("go"),
			{Role: loop.RoleAssistant, ItemsFrom: chatItemsFrom, Items: items, ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "count", Arguments: "{}"}}},
			{Role: loop.RoleTool, ToolCallID: "c1", Name: "count", Content: "3"}}
		s := oniontest.NewServer(t, oniontest.Text("done"))
		if _, err := newModel(t, s).Generate(context.Background(), &loop.Request{Model: "m", Messages: msgs, Tools: testTools}, nil); err != nil {
			t.Fatal(err)
		}
		if raw := s.Requests()[0].Raw; strings.Contains(string(raw), "extra_content") {
			t.Errorf("Items holding %.40s… sent extra_content", x)
		}
	}
}

// TestReasoningOnlyItemsAsWritten holds itemsOf's shortcut to what keep
// writes.
func TestReasoningOnlyItemsAsWritten(t *testing.T) {
	var m loop.Message
	chatItems{ReasoningField: "reasoning"}.keep(&m)
	if string(m.Items) != reasoningOnly {
		t.Fatalf("keep wrote %s, the shortcut reads %s", m.Items, reasoningOnly)
	}
	if n := testing.AllocsPerRun(100, func() { _ = itemsOf(&m) }); n != 0 {
		t.Errorf("itemsOf allocates %v times for a reasoning-only message", n)
	}
}
