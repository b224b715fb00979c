package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// wires are the package's wires, by the options that choose them.
var wires = []struct {
	name string
	opts []Option
}{
	{"chat", nil},
	{"responses", []Option{ResponsesAPI()}},
	{"chained", []Option{ChainResponses()}},
}

// testTools are two tools as an agent sends them.
var testTools = []loop.ToolDef{
	{Name: "lookup", Description: "Lookup returns the record stored under key.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","description":"the record's key"}},"required":["key"],"additionalProperties":false}`)},
	{Name: "count", Description: "Count counts the records.", Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
}

// newModel is a Model of s, made with opts.
func newModel(t *testing.T, s *oniontest.Server, opts ...Option) *Model {
	t.Helper()
	m, err := New(append([]Option{BaseURL(s.URL()), APIKey("test-key")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(CloseIdleConnections)
	return m
}

func userMessage(text string) loop.Message { return loop.Message{Role: loop.RoleUser, Content: text} }

// drive sends msgs with tools to m as an agent's loop would, until the
// model answers without tool calls: each call is answered by a tool
// message whose text is result(call), or "result of <name>" when result
// is nil. It returns the whole conversation.
func drive(ctx context.Context, m *Model, tools []loop.ToolDef, result func(loop.ToolRequest) loop.Message, msgs ...loop.Message) ([]loop.Message, error) {
	for range 10 {
		resp, err := m.Generate(ctx, &loop.Request{Model: "gpt-4o-mini", Messages: msgs, Tools: tools}, nil)
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			return msgs, nil
		}
		for _, c := range resp.Message.ToolCalls {
			out := loop.Message{Content: "result of " + c.Name}
			if result != nil {
				out = result(c)
			}
			out.Role, out.ToolCallID, out.Name = loop.RoleTool, c.ID, c.Name
			msgs = append(msgs, out)
		}
	}
	return msgs, fmt.Errorf("no answer after 10 rounds")
}
