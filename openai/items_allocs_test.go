//go:build !race

package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/onionkit/onion/loop"
)

// The race detector's instrumentation allocates where the code does not:
// this file's counts hold without it.

// TestItemsCostNothingPerRequest: writing a message whose Items hold a
// reasoning member, extras and details allocates nothing but the body.
func TestItemsCostNothingPerRequest(t *testing.T) {
	var m loop.Message
	chatItems{ReasoningField: "reasoning", ToolCallExtra: []json.RawMessage{json.RawMessage(`{"google":{"thought_signature":"c2ln"}}`)},
		ReasoningDetails: json.RawMessage(`[{"type":"reasoning.text","text":"a","signature":"s","index":0}]`)}.keep(&m)
	m.Role, m.Reasoning = loop.RoleAssistant, "a"
	m.ToolCalls = []loop.ToolRequest{{ID: "c1", Name: "f", Arguments: "{}"}}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf = appendChatMessage(buf[:0], &m, nil) }); n != 0 {
		t.Errorf("%v allocations a message", n)
	}
	for _, want := range []string{`"reasoning_details":[{"type":"reasoning.text"`, `"extra_content":{"google":{"thought_signature":"c2ln"}}`} {
		if !bytes.Contains(buf, []byte(want)) {
			t.Errorf("sent %s\nwant %s in it", buf, want)
		}
	}
}
