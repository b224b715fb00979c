package openai

import (
	"context"
	"encoding/json"
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
			b, err := json.Marshal(resp.Message)
			if err != nil {
				t.Fatal(err)
			}
			var back loop.Message
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
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
