package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// This file replays OpenRouter exchanges pydantic-ai recorded
// (testdata/pydantic-ai, see its README): reasoning_details, whole and
// streamed, kept and sent back.

// recordedExchange is one interaction of a cassette: the request body the
// recording client sent, and the reply it got (a whole reply turned back
// into JSON from the cassette's YAML, a stream byte for byte).
type recordedExchange struct {
	request     any
	contentType string
	reply       []byte
}

// loadCassette reads a pydantic-ai VCR cassette of testdata/pydantic-ai.
func loadCassette(t *testing.T, name string) []recordedExchange {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "pydantic-ai", name))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Interactions []struct {
			Request struct {
				ParsedBody any `yaml:"parsed_body"`
			} `yaml:"request"`
			Response struct {
				ParsedBody any `yaml:"parsed_body"`
				Body       struct {
					String string `yaml:"string"`
				} `yaml:"body"`
			} `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []recordedExchange
	for _, in := range c.Interactions {
		x := recordedExchange{request: jsonValue(t, in.Request.ParsedBody), contentType: "text/event-stream", reply: []byte(in.Response.Body.String)}
		if in.Response.ParsedBody != nil {
			b, err := json.Marshal(in.Response.ParsedBody)
			if err != nil {
				t.Fatal(err)
			}
			x.contentType, x.reply = "application/json", b
		}
		out = append(out, x)
	}
	return out
}

// jsonValue is v (a YAML value, or JSON bytes) as encoding/json decodes
// JSON into an any, with the members whose value is null left out.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, ok := v.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return dropNulls(out)
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

// messageAt is messages[i] of a request body.
func messageAt(t *testing.T, body any, i int) map[string]any {
	t.Helper()
	msgs, _ := body.(map[string]any)["messages"].([]any)
	if i >= len(msgs) {
		t.Fatalf("the request has %d messages, want message %d", len(msgs), i)
	}
	m, _ := msgs[i].(map[string]any)
	return m
}

// TestOpenRouterReasoningDetailsSentBack replays gpt-5-mini through
// OpenRouter: the reply's reasoning_details (a summary and encrypted
// reasoning) go back on the assistant message of the next request as the
// recording client sent them, in place of the reasoning text.
func TestOpenRouterReasoningDetailsSentBack(t *testing.T) {
	xs := loadCassette(t, "openrouter_preserve_reasoning_block.yaml")
	if len(xs) != 2 {
		t.Fatalf("%d interactions, want 2", len(xs))
	}
	s := oniontest.NewServer(t, oniontest.ReplayStatus(200, xs[0].contentType, xs[0].reply), oniontest.ReplayStatus(200, xs[1].contentType, xs[1].reply))
	m := newModel(t, s)
	first := messageAt(t, xs[0].request, 0)
	msgs := []loop.Message{userMessage(first["content"].(string))}
	resp, err := m.Generate(context.Background(), &loop.Request{Model: "openai/gpt-5-mini", Messages: msgs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Message.Reasoning, "**Greeting warmly**") {
		t.Errorf("reasoning %.40q", resp.Message.Reasoning)
	}
	back := throughJSON(t, resp.Message) // as a State keeps it
	next := messageAt(t, xs[1].request, 2)
	msgs = append(msgs, back, userMessage(next["content"].(string)))
	if _, err := m.Generate(context.Background(), &loop.Request{Model: "openai/gpt-5-mini", Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	sent := messageAt(t, jsonValue(t, s.Requests()[1].Raw), 1)
	want := messageAt(t, xs[1].request, 1)
	if !reflect.DeepEqual(sent, want) {
		got, _ := json.Marshal(sent)
		t.Errorf("sent the assistant message\n%.600s\nthe recording client sent\n%.600v", got, want)
	}
}

// TestOpenRouterStreamedReasoningDetails replays two streams through
// OpenRouter: Claude's reasoning text, streamed in pieces with its
// signature last, is put together into one entry; o3's encrypted
// reasoning, in one piece, is kept as it came. Each goes back on the
// assistant message.
func TestOpenRouterStreamedReasoningDetails(t *testing.T) {
	for _, tc := range []struct {
		file string
		want func(t *testing.T, details []map[string]any, reasoning string)
	}{
		{"openrouter_streaming_reasoning.yaml", func(t *testing.T, d []map[string]any, reasoning string) {
			if len(d) != 1 || d[0]["type"] != "reasoning.text" || d[0]["format"] != "anthropic-claude-v1" || d[0]["index"] != 0.0 ||
				d[0]["text"] != reasoning || !strings.HasPrefix(d[0]["signature"].(string), "Et0BCkgIChACGAIqQA2s7h7tA7IG35fbwVkou9PM2hANVJNUwcEM4q12fTRDK6y3v6YoEvJ+7bko8wnW/GLsQFXadaJ") {
				t.Errorf("details %v\nreasoning %q", d, reasoning)
			}
		}},
		{"openrouter_stream_with_reasoning.yaml", func(t *testing.T, d []map[string]any, reasoning string) {
			if len(d) != 1 || d[0]["type"] != "reasoning.encrypted" || !strings.HasPrefix(d[0]["data"].(string), "gAAAAABpCCSIBxdevbk-8QtJuf4C6mgqDwXaUXZGqXqKQRX62aYMAYCg7DbFt3") {
				t.Errorf("details %v", d)
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			xs := loadCassette(t, tc.file)
			s := oniontest.NewServer(t, oniontest.ReplayStatus(200, xs[0].contentType, xs[0].reply), oniontest.Text("ok"))
			m := newModel(t, s)
			msgs := []loop.Message{userMessage("go")}
			var deltas strings.Builder
			resp, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: msgs}, func(d loop.Delta) { deltas.WriteString(d.Reasoning) })
			if err != nil {
				t.Fatal(err)
			}
			if deltas.String() != resp.Message.Reasoning {
				t.Errorf("reasoning deltas %q, message %q", deltas.String(), resp.Message.Reasoning)
			}
			if _, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: append(msgs, resp.Message, userMessage("again"))}, nil); err != nil {
				t.Fatal(err)
			}
			raw := sentAssistant(t, s.Requests()[1].Raw)
			if _, ok := raw["reasoning"]; ok {
				t.Errorf("the reasoning text went back beside its details")
			}
			var details []map[string]any
			if err := json.Unmarshal(raw["reasoning_details"], &details); err != nil {
				t.Fatalf("reasoning_details %s: %v", raw["reasoning_details"], err)
			}
			tc.want(t, details, resp.Message.Reasoning)
		})
	}
}

// TestReasoningDetailsBounded: details of a restored history that are not
// an array of objects within the bound are not sent; streamed pieces past
// the bounds keep none.
func TestReasoningDetailsBounded(t *testing.T) {
	for _, x := range []string{`{}`, `[]`, `[1]`, `"x"`, `[{"a":1}` + strings.Repeat(" ", maxDetailsBytes) + `]`} {
		if detailsOK([]byte(x)) {
			t.Errorf("detailsOK(%.20q) = true", x)
		}
	}
	if !detailsOK([]byte(` [{"type":"reasoning.text","text":"a"}] `)) {
		t.Error("detailsOK refused a plain entry")
	}
	var d detailsAssembler
	for i := range maxDetails + 1 {
		d.add([]byte(`[{"text":"a"}]`)) // no index: each is an entry of its own
		if i == maxDetails-1 && d.result() == nil {
			t.Fatal("refused maxDetails entries")
		}
	}
	if d.result() != nil {
		t.Error("kept more than maxDetails entries")
	}
	var big detailsAssembler
	piece := []byte(`[{"index":0,"text":"` + strings.Repeat("a", 1<<20) + `"}]`)
	for range 9 {
		big.add(piece)
	}
	if big.result() != nil {
		t.Error("kept details over maxDetailsBytes")
	}
	var idx detailsAssembler
	idx.add([]byte(`[{"index":64,"text":"a"}]`))
	if idx.result() != nil {
		t.Error("kept an index past maxDetails")
	}
	m := loop.Message{Role: loop.RoleAssistant, Reasoning: "r", ItemsFrom: chatItemsFrom,
		Items: json.RawMessage(`{"reasoning_details":{"not":"an array"},"reasoning_field":"reasoning"}`)}
	body := appendChatMessage(nil, &m, nil)
	if bytes.Contains(body, []byte("reasoning_details")) || !bytes.Contains(body, []byte(`"reasoning":"r"`)) {
		t.Errorf("sent %s", body)
	}
}

// FuzzReasoningDetails feeds pieces of any shape to the assembler: it
// never panics, and what it keeps is an array of objects within the bound,
// as detailsOK holds one from outside.
func FuzzReasoningDetails(f *testing.F) {
	f.Add([]byte(`[{"type":"reasoning.text","text":"a","index":0}]`), []byte(`[{"text":"b","signature":"s","index":0}]`))
	f.Add([]byte(`[{"index":1,"data":"x"},{"index":0,"summary":"y"}]`), []byte(`[]`))
	f.Add([]byte(`[{"text":1},{"index":-1}]`), []byte(`null`))
	f.Add([]byte(`[{"text":"\ud800","id":null},{"id":"r"}]`), []byte(`[{"id":null,"index":0}]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var d detailsAssembler
		d.add(a)
		d.add(b)
		out := d.result()
		if out != nil && !detailsOK(out) {
			t.Fatalf("kept %s, which detailsOK refuses", out)
		}
	})
}

// TestReasoningDetailsOrder: entries go out by index, and those that came
// without one after them, in the order they came.
func TestReasoningDetailsOrder(t *testing.T) {
	var d detailsAssembler
	d.add([]byte(`[{"text":"a"},{"text":"b","index":2},{"text":"c","index":1}]`))
	d.add([]byte(`[{"text":"d"},{"text":"e","index":1}]`))
	want := `[{"text":"ce","index":1},{"text":"b","index":2},{"text":"a"},{"text":"d"}]`
	if got := string(d.result()); got != want {
		t.Errorf("result %s\nwant %s", got, want)
	}
}
