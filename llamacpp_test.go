package onion_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// exchange is one line of a llama.cpp recording (see
// oniontest/testdata/fixtures/llamacpp/README.md).
type exchange struct {
	Status      int                 `json:"status"`
	RespHeaders map[string][]string `json:"resp_headers"`
	RespBody    json.RawMessage     `json:"resp_body"`
}

// llamaReply is the recorded reply of the first exchange of file, served as
// llama.cpp sent it: the raw SSE text of a stream, the JSON body as it was
// recorded otherwise.
func llamaReply(t *testing.T, file string) oniontest.Step {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("oniontest", "testdata", "fixtures", "llamacpp", file))
	if err != nil {
		t.Fatal(err)
	}
	var e exchange
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	body := []byte(e.RespBody)
	var sse string
	if json.Unmarshal(e.RespBody, &sse) == nil {
		body = []byte(sse)
	}
	return oniontest.ReplayStatus(e.Status, e.RespHeaders["Content-Type"][0], body)
}

// TestLlamaCppCutReplies replays llama.cpp's replies cut by its token
// limit (-n 12): a tool call cut mid-arguments, which its parser leaves as
// text, and a stream cut before any delta. Neither passes for an answer:
// the run ends with StopLength and no tool runs.
func TestLlamaCppCutReplies(t *testing.T) {
	for _, tc := range []struct {
		file   string
		stream bool
		output string
	}{
		{"22-go-lengthrun-v2.jsonl", false, "<tool_call>\n{\"name\"\n \t"},
		{"22-go-lengthstream-v2.jsonl", true, ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := oniontest.NewServer(t, llamaReply(t, tc.file))
			ran := false
			lookup, err := onion.NewTool(func(in struct {
				City string `json:"city"`
			}) string {
				ran = true
				return "a city"
			}, onion.Name("lookup"), onion.Description("Returns what is known about a city."), onion.Read, onion.NoApproval())
			if err != nil {
				t.Fatal(err)
			}
			a, err := onion.NewAgent("a", lookup, onion.BaseURL(s.URL()), onion.APIKey("k"))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var res *onion.Result
			if tc.stream {
				for e, err := range a.Stream(context.Background(), "What do you know about Lisbon?") {
					if err != nil {
						t.Fatal(err)
					}
					if e.Kind == onion.EventDone {
						res = e.Result
					}
				}
			} else if res, err = a.Run(context.Background(), "What do you know about Lisbon?"); err != nil {
				t.Fatal(err)
			}
			if res.StopReason != onion.StopLength || res.Output != tc.output || ran || len(res.ToolCalls) != 0 {
				t.Errorf("stop %q, output %q, tool ran %v, calls %d; want %q, the cut text and nothing run", res.StopReason, res.Output, ran, len(res.ToolCalls), onion.StopLength)
			}
		})
	}
}
