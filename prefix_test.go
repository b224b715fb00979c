package onion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// conversationEnd returns the offset in body of the closing bracket of
// its conversation (Chat Completions' messages, the Responses API's
// input) and the bytes of each other top-level field.
func conversationEnd(t *testing.T, body []byte) (int, map[string]string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not an object: %v", body, err)
	}
	end, rest := -1, map[string]string{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if key == "messages" || key == "input" {
			end = int(dec.InputOffset()) - 1
			continue
		}
		rest[key.(string)] = string(v)
	}
	if end < 0 || body[end] != ']' {
		t.Fatalf("%s: no conversation array", body)
	}
	return end, rest
}

// TestRequestsKeepAByteStablePrefix runs three rounds of tool calls, then
// the answer, on each wire, plain and streamed: each request's body, up
// to the end of its conversation, is the first bytes of the next one, and
// its tools, instructions and settings are the same bytes, so OpenAI's
// automatic prompt cache serves every request but the first from what
// the one before it sent.
func TestRequestsKeepAByteStablePrefix(t *testing.T) {
	for _, w := range []struct {
		name string
		opts []any
	}{{"chat", nil}, {"responses", []any{onion.ResponsesAPI()}}} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", w.name, stream), func(t *testing.T) {
				s := oniontest.NewServer(t,
					oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a <b> & c"}`)),
					oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"b"}`), oniontest.Call("lookup", `{"key":"c"}`)),
					oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
					oniontest.Text("done: <a> & \u2028"))
				a, err := onion.NewAgent("cache", append([]any{Lookup, Weather, onion.SystemPrompt("Look things up; say <why> & how."),
					onion.Temperature(0.3), onion.BaseURL(s.URL()), onion.APIKey("k")}, w.opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				defer onion.CloseIdleConnections()
				if stream {
					for _, err := range a.Stream(context.Background(), "Look up a, b and c, then the weather.") {
						if err != nil {
							t.Fatal(err)
						}
					}
				} else if _, err := a.Run(context.Background(), "Look up a, b and c, then the weather."); err != nil {
					t.Fatal(err)
				}
				reqs := s.Requests()
				if len(reqs) != 4 {
					t.Fatalf("%d requests, want 4", len(reqs))
				}
				for n := 0; n+1 < len(reqs); n++ {
					cur, next := reqs[n].Raw, reqs[n+1].Raw
					end, curRest := conversationEnd(t, cur)
					_, nextRest := conversationEnd(t, next)
					if !bytes.HasPrefix(next, cur[:end]) {
						i := 0
						for i < end && cur[i] == next[i] {
							i++
						}
						t.Errorf("request %d is not the start of request %d: they part at byte %d of %d:\n%s\n%s",
							n+1, n+2, i, end, cur[max(i-80, 0):min(i+80, end)], next[max(i-80, 0):min(i+80, len(next))])
					}
					for k, v := range curRest {
						if nextRest[k] != v {
							t.Errorf("field %q of request %d is not request %d's:\n%s\n%s", k, n+2, n+1, nextRest[k], v)
						}
					}
				}
				t.Logf("4 requests of %d to %d bytes", len(reqs[0].Raw), len(reqs[3].Raw))
			})
		}
	}
}
