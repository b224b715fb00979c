package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// TestStreamInterleavedToolCalls streams the fragments of two tool calls
// interleaved, as a server may when it generates calls in parallel, over
// HTTP: both calls come whole. The assembler used to keep each call's
// arguments in a strings.Builder inside a slice that append copied, and the
// first fragment after the second call began panicked it.
func TestStreamInterleavedToolCalls(t *testing.T) {
	chunks := []string{
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"lookup","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"count","arguments":"{"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"key\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"k\u00e9\"}"}}]},"finish_reason":"tool_calls"}]}`,
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer s.Close()
	m, err := New(BaseURL(s.URL+"/v1"), APIKey("test-key"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(CloseIdleConnections)
	resp, err := m.Generate(context.Background(), &loop.Request{Model: "gpt-4o-mini", Messages: []loop.Message{userMessage("go")}, Tools: testTools}, func(loop.Delta) {})
	if err != nil {
		t.Fatal(err)
	}
	want := []loop.ToolRequest{{ID: "call_a", Name: "lookup", Arguments: `{"key":"ké"}`}, {ID: "call_b", Name: "count", Arguments: "{}"}}
	if fmt.Sprint(resp.Message.ToolCalls) != fmt.Sprint(want) || resp.FinishReason != "tool_calls" || resp.ID != "c1" {
		t.Errorf("calls %+v, finish %q, id %q", resp.Message.ToolCalls, resp.FinishReason, resp.ID)
	}
}

// endless is a body of one line that never ends.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.read += len(p)
	return len(p), nil
}

// TestStreamLineBound streams a line that never ends: the reader gives up
// after maxEventBytes, having read little more, rather than read on into
// memory without end.
func TestStreamLineBound(t *testing.T) {
	body := &endless{}
	r := newSSEReader(body, 300)
	_, err := r.RecvRaw()
	if !errors.Is(err, errEventTooLong) {
		t.Fatalf("err = %v", err)
	}
	if body.read > maxEventBytes+readSize || cap(r.buf) > maxEventBytes+readSize {
		t.Errorf("read %d bytes into a buffer of %d for a bound of %d", body.read, cap(r.buf), maxEventBytes)
	}
	if !strings.Contains(err.Error(), "32 MiB") {
		t.Errorf("error %q does not say the bound", err)
	}
}

// deltaBody is a stream of n deltas of 4 bytes of text, or of a call's
// arguments, on the Chat wire or the Responses API's.
func deltaBody(responses, args bool, n int) []byte {
	var b strings.Builder
	switch {
	case !responses:
		head := `data: {"id":"chatcmpl-C3x9q2aVnW8rT5yLm0bKpJ4dF6sHe","object":"chat.completion.chunk","created":1761840000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":`
		tail := `,"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"k3Xv"}` + "\n\n"
		delta := `{"content":"abcd"}`
		if args {
			b.WriteString(head + `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"save","arguments":""}}]}` + tail)
			delta = `{"tool_calls":[{"index":0,"function":{"arguments":"abcd"}}]}`
		}
		for range n {
			b.WriteString(head + delta + tail)
		}
		b.WriteString("data: [DONE]\n\n")
	case args:
		b.WriteString(`data: {"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"save","arguments":""}}` + "\n\n")
		for range n {
			b.WriteString("event: response.function_call_arguments.delta\n" + `data: {"type":"response.function_call_arguments.delta","sequence_number":7,"item_id":"fc_1","output_index":0,"delta":"abcd","obfuscation":"Xk3vQe9a2Lm0"}` + "\n\n")
		}
		all := strings.Repeat("abcd", n)
		b.WriteString(`data: {"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"save","arguments":"` + all + `"}}` + "\n\n")
	default:
		b.WriteString(`data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}` + "\n\n")
		for range n {
			b.WriteString("event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"abcd","logprobs":[],"obfuscation":"Xk3vQe9a2Lm0"}` + "\n\n")
		}
		all := strings.Repeat("abcd", n)
		b.WriteString(`data: {"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"` + all + `"}]}}` + "\n\n")
	}
	return []byte(b.String())
}

// TestStreamDeltaCost holds both wires to the goal of a few allocations
// and bytes a delta, for text and for a tool call's arguments: at most 3
// allocations and 200 bytes per 4-byte delta, everything counted (the
// request, the final events, the response).
func TestStreamDeltaCost(t *testing.T) {
	const n = 20000
	for _, c := range []struct {
		name            string
		responses, args bool
	}{{"chat/text", false, false}, {"chat/args", false, true}, {"responses/text", true, false}, {"responses/args", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			body := deltaBody(c.responses, c.args, n)
			cfg := goopenai.DefaultConfig("test-key")
			cfg.BaseURL = "http://stream.test/v1"
			cfg.HTTPClient = replayDoer{body: body, contentType: "text/event-stream"}
			opts := []Option{WithClient(goopenai.NewClientWithConfig(cfg))}
			if c.responses {
				opts = append(opts, ResponsesAPI())
			}
			m, err := New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			text := 0
			resp, err := m.Generate(context.Background(), &loop.Request{Model: "gpt-4o-mini", Messages: []loop.Message{userMessage("go")}},
				func(d loop.Delta) { text += len(d.Text) })
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			got := text
			if c.args {
				got = len(resp.Message.ToolCalls[0].Arguments)
			}
			if got != 4*n {
				t.Fatalf("read %d bytes of deltas, want %d", got, 4*n)
			}
			allocs := float64(after.Mallocs-before.Mallocs) / n
			bytes := float64(after.TotalAlloc-before.TotalAlloc) / n
			t.Logf("%.2f allocations, %.1f bytes a delta", allocs, bytes)
			if allocs > 3 || bytes > 200 {
				t.Errorf("%.2f allocations and %.1f bytes a delta, want at most 3 and 200", allocs, bytes)
			}
		})
	}
}
