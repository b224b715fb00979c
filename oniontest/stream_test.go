package oniontest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
)

// Streamed replies: text and tool calls as deltas, in the wire's shape.

func TestStreamText(t *testing.T) {
	const text = "The quick brown fox jumps over the lazy dog."
	s := oniontest.NewServer(t, oniontest.Text(text))
	stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	chunks := recv(t, stream)
	a := assemble(chunks)
	if a.content != text || a.finish != openai.FinishReasonStop {
		t.Errorf("assembled %q, finish %q; want %q, stop", a.content, a.finish, text)
	}
	first := chunks[0].Choices[0].Delta
	if first.Role != "assistant" || first.Content != "" {
		t.Errorf("first delta = %+v, want role only", first)
	}
	var contentDeltas int
	for _, c := range chunks {
		if c.Object != "chat.completion.chunk" {
			t.Errorf("object = %q", c.Object)
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			contentDeltas++
		}
	}
	if contentDeltas != 9 {
		t.Errorf("%d content deltas, want one per word (9)", contentDeltas)
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.TotalTokens == 0 {
		t.Errorf("last chunk = %+v, want the usage chunk with no choices", last)
	}
}

func TestStreamWireShape(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("f", `{"a":1}`)),
		oniontest.Text("no usage asked"),
	)
	resp, body, err := post(t, s, `{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true}}`)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !bytes.HasSuffix(body, []byte("}\n\ndata: [DONE]\n\n")) {
		t.Errorf("stream does not end in data: [DONE]:\n%s", body)
	}
	evs := events(t, body)
	for i, e := range evs {
		if e["object"] != "chat.completion.chunk" || e["id"] != evs[0]["id"] || e["model"] != "m" {
			t.Errorf("event %d: object, id, model = %v, %v, %v", i, e["object"], e["id"], e["model"])
		}
		if u, ok := e["usage"]; !ok || (i < len(evs)-1 && u != nil) {
			t.Errorf("event %d: usage = %v (present %v), want null until the last", i, u, ok)
		}
	}
	first := evs[0]["choices"].([]any)[0].(map[string]any)["delta"]
	if fmt.Sprint(first) != "map[content:<nil> role:assistant]" {
		t.Errorf("first delta = %v, want role assistant and content null", first)
	}
	header := evs[1]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["tool_calls"].([]any)[0]
	if fmt.Sprint(header) != "map[function:map[arguments: name:f] id:call_1 index:0 type:function]" {
		t.Errorf("tool call header = %v", header)
	}
	last := evs[len(evs)-1]
	if choices, ok := last["choices"].([]any); !ok || len(choices) != 0 || last["usage"] == nil {
		t.Errorf("last event = %v, want choices [] and usage", last)
	}

	_, body, err = post(t, s, `{"model":"m","messages":[],"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events(t, body) {
		if _, ok := e["usage"]; ok {
			t.Errorf("event %d has a usage key though include_usage was not set", i)
		}
	}
}

func TestStreamToolCalls(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(
		oniontest.Call("get_weather", `{"city":"Paris","units":"metric"}`),
		oniontest.ToolCall{ID: "mine", Name: "get_time", Arguments: `{"tz":"Europe/Paris ☀"}`},
	))
	stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	chunks := recv(t, stream)
	a := assemble(chunks)
	want := []openai.ToolCall{
		{ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "get_weather", Arguments: `{"city":"Paris","units":"metric"}`}},
		{ID: "mine", Type: "function", Function: openai.FunctionCall{Name: "get_time", Arguments: `{"tz":"Europe/Paris ☀"}`}},
	}
	if fmt.Sprint(a.calls) != fmt.Sprint(want) || a.finish != openai.FinishReasonToolCalls {
		t.Errorf("assembled %+v, finish %q\nwant %+v, tool_calls", a.calls, a.finish, want)
	}
	if a.deltas < 2*3 {
		t.Errorf("%d tool-call deltas, want a header and several argument fragments per call", a.deltas)
	}
	for _, c := range chunks {
		for _, ch := range c.Choices {
			for _, d := range ch.Delta.ToolCalls {
				if d.Index == nil {
					t.Fatalf("delta %+v has no index", d)
				}
			}
		}
	}
}

func TestStreamNoIndex(t *testing.T) {
	step := oniontest.ToolCalls(oniontest.Call("a", `{"x":"one"}`), oniontest.Call("b", `{"y":"two"}`)).NoIndex()
	s := oniontest.NewServer(t, step, step)

	_, body, err := post(t, s, `{"model":"m","messages":[],"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	var deltas int
	for _, e := range events(t, body) {
		for _, ch := range e["choices"].([]any) {
			calls, _ := ch.(map[string]any)["delta"].(map[string]any)["tool_calls"].([]any)
			for _, c := range calls {
				deltas++
				if _, ok := c.(map[string]any)["index"]; ok {
					t.Errorf("tool-call delta %v has an index", c)
				}
			}
		}
	}
	if deltas == 0 {
		t.Fatalf("no tool-call deltas in\n%s", body)
	}

	stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	chunks := recv(t, stream)
	for _, c := range chunks {
		for _, ch := range c.Choices {
			for _, d := range ch.Delta.ToolCalls {
				if d.Index != nil {
					t.Errorf("go-openai delta Index = %d, want nil", *d.Index)
				}
			}
		}
	}
	a := assemble(chunks)
	if len(a.calls) != 2 || a.calls[0].Function.Arguments != `{"x":"one"}` || a.calls[1].Function.Arguments != `{"y":"two"}` {
		t.Errorf("assembled by id = %+v", a.calls)
	}
}

func TestStreamWhole(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(
		oniontest.Call("a", `{"x":"a long enough argument"}`),
		oniontest.Call("b", `{"y":"another long argument"}`),
	).Whole())
	stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	var whole []openai.ToolCall
	for _, c := range recv(t, stream) {
		for _, ch := range c.Choices {
			whole = append(whole, ch.Delta.ToolCalls...)
		}
	}
	zero, one := 0, 1
	want := []openai.ToolCall{
		{Index: &zero, ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "a", Arguments: `{"x":"a long enough argument"}`}},
		{Index: &one, ID: "call_2", Type: "function", Function: openai.FunctionCall{Name: "b", Arguments: `{"y":"another long argument"}`}},
	}
	gotJSON, _ := json.Marshal(whole)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("tool-call deltas = %s\nwant one whole delta per call: %s", gotJSON, wantJSON)
	}
}
