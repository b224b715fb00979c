package openai

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

// TestOutputItemsFollowTheToolCalls: the items of a message go back as
// they came, but the message's tool calls decide which calls go with them.
func TestOutputItemsFollowTheToolCalls(t *testing.T) {
	const (
		reasoning = `{"type":"reasoning","id":"rs_1","encrypted_content":"opaque","summary":[]}`
		text      = `{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","text":"Looking."}],"role":"assistant"}`
		call      = `{"id":"fc_1","type":"function_call","status":"completed","arguments":"{}","call_id":"c1","name":"f"}`
		noID      = `{"id":"fc_2","type":"function_call","status":"completed","arguments":"{}","call_id":"","name":"f"}`
	)
	items := func(raw ...string) json.RawMessage { return json.RawMessage("[" + strings.Join(raw, ",") + "]") }
	for _, tc := range []struct {
		name  string
		msg   loop.Message
		want  []string
		found bool
	}{
		{"as they came", loop.Message{Items: items(reasoning, text, call), ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "f", Arguments: "{}"}}},
			[]string{reasoning, text, call}, true},
		{"a call the loop gave an ID", loop.Message{Items: items(reasoning, noID), ToolCalls: []loop.ToolRequest{{ID: "call_run_1_0", Name: "f", Arguments: "{}"}}},
			[]string{`{"type":"function_call","call_id":"call_run_1_0","name":"f","arguments":"{}"}`}, true},
		{"calls the message no longer has", loop.Message{Items: items(reasoning, text, call)},
			[]string{text}, true},
		{"a call listed twice", loop.Message{Items: items(call, call), ToolCalls: []loop.ToolRequest{{ID: "c1"}}},
			[]string{call}, true},
		{"no items", loop.Message{Content: "hi"}, nil, false},
		{"items of another kind", loop.Message{Items: json.RawMessage(`{"parts":[]}`)}, nil, false},
		{"items without a type", loop.Message{Items: items(`{"text":"x"}`)}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := outputItems(tc.msg)
			var gotText []string
			for _, g := range got {
				gotText = append(gotText, string(g))
			}
			if ok != tc.found || !slices.Equal(gotText, tc.want) {
				t.Errorf("outputItems = %q, %v; want %q, %v", gotText, ok, tc.want, tc.found)
			}
		})
	}
}

// TestResponsesRequestShape: leading system messages become the
// instructions, the mode decides store, include and previous_response_id,
// and a conversation from another wire (no items) is built from its fields.
func TestResponsesRequestShape(t *testing.T) {
	temp := float32(0.2)
	req := &loop.Request{Model: "m", Temperature: &temp, Messages: []loop.Message{
		{Role: loop.RoleSystem, Content: "Be brief."},
		{Role: loop.RoleUser, Content: "q1"},
		{Role: loop.RoleAssistant, Content: "Looking.", ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}, ResponseID: "resp_1"},
		{Role: loop.RoleTool, ToolCallID: "c1", Name: "f", Content: "out"},
		{Role: loop.RoleUser, Content: "q2"},
	}, Tools: []loop.ToolDef{{Name: "f", Description: "does f", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}}}

	encode := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stateless := responsesRequest(req, false)
	if stateless.Instructions != "Be brief." || *stateless.Store || len(stateless.Include) != 1 || stateless.PreviousResponseID != "" || *stateless.Temperature != 0.2 {
		t.Errorf("stateless request = %s", encode(stateless))
	}
	want := `[{"role":"user","content":"q1"},{"role":"assistant","content":"Looking."},` +
		`{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"a\":1}"},` +
		`{"type":"function_call_output","call_id":"c1","output":"out"},{"role":"user","content":"q2"}]`
	if got := encode(stateless.Input); got != want {
		t.Errorf("input\n got %s\nwant %s", got, want)
	}
	if got := encode(stateless.Tools); got != `[{"description":"does f","name":"f","parameters":{"type":"object"},"strict":true,"type":"function"}]` || stateless.ToolChoice != "auto" {
		t.Errorf("tools = %s, tool_choice %v", got, stateless.ToolChoice)
	}

	chained := responsesRequest(req, true)
	if !*chained.Store || len(chained.Include) != 0 || chained.PreviousResponseID != "resp_1" {
		t.Errorf("chained request = %s", encode(chained))
	}
	if got := encode(chained.Input); got != `[{"type":"function_call_output","call_id":"c1","output":"out"},{"role":"user","content":"q2"}]` {
		t.Errorf("chained input = %s, want what came after resp_1", got)
	}
	if noTools := responsesRequest(&loop.Request{Model: "m"}, false); noTools.Tools != nil || noTools.ToolChoice != nil {
		t.Errorf("a request without tools has tools %v, tool_choice %v", noTools.Tools, noTools.ToolChoice)
	}
}

// FuzzItemsOf holds itemsOf's scanner to encoding/json's reading of the
// same Items (decodedItems): the same reasoning member, the same extra for
// every call, the same details.
func FuzzItemsOf(f *testing.F) {
	f.Add([]byte(`{"reasoning_field":"reasoning","tool_call_extra":[{"google":{"thought_signature":"s"}},null,{ "k" : 3 }],"reasoning_details":[{"type":"reasoning.text","text":"a"}]}`))
	f.Add([]byte(`{"Reasoning_Field":"reasoning","tool_call_extra":[1,"x",{}]}`))
	f.Add([]byte(`{"reasoning_field":"reasoning","reasoning_field":"","tool_call_extra":null,"reasoning_details":{"x":1}}`))
	f.Add([]byte(`{"tool_call_extra":[{"a":"\u003c"}],"reasoning_d\u0065tails":[{}]}`))
	f.Add([]byte(`{"reasoning_field":5}`))
	f.Fuzz(func(t *testing.T, items []byte) {
		m := loop.Message{Items: items, ItemsFrom: chatItemsFrom}
		got := itemsOf(&m)
		want := itemsView{}
		if json.Valid(items) {
			want = decodedItems(items)
			if want.details != nil && !detailsOK(want.details) {
				want.details = nil
			}
		}
		if got.reasoning != want.reasoning {
			t.Fatalf("reasoning %v, encoding/json %v", got.reasoning, want.reasoning)
		}
		if !sameJSON(got.details, want.details) {
			t.Fatalf("details %s, encoding/json %s", got.details, want.details)
		}
		for i := range 8 {
			if g, w := got.extraAt(i), want.extraAt(i); !sameJSON(g, w) {
				t.Fatalf("extra %d: %s, encoding/json %s", i, g, w)
			}
		}
	})
}

// sameJSON reports whether a and b are the same JSON value, or both none.
func sameJSON(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
