package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/onionkit/onion/loop"
)

// FuzzResponseStream feeds the data lines of an arbitrary event stream to
// the Responses wire's assembler, then sends the reply back as input: no
// event may panic it, and it holds at most one item per event, whatever
// output_index the events claim.
func FuzzResponseStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "oniontest", "testdata", "fixtures", "responses", "*.sse"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`data: {"type":"response.function_call_arguments.delta","output_index":1000000000,"delta":"{"}`))
	f.Add([]byte(`data: {"type":"response.output_item.added","output_index":-1,"item":{"type":"function_call"}}` + "\n" +
		`data: {"type":"response.completed","response":{"output":[{"type":"function_call","call_id":"c","arguments":"{}"},{"type":"reasoning","summary":[{"text":"x"}]}]}}`))
	f.Add([]byte(`data: {"type":"error","code":429,"message":"slow down"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a := responseAssembler{onDelta: func(loop.Delta) {}}
		lines := 0
		for line := range bytes.Lines(body) {
			lines++
			data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
			if !ok {
				continue
			}
			var ev streamEvent
			if json.Unmarshal(bytes.TrimSpace(data), &ev) != nil {
				continue
			}
			complete, err := a.add(&ev)
			if len(a.items) > lines {
				t.Fatalf("%d items after %d lines", len(a.items), lines)
			}
			if err != nil || !complete {
				continue
			}
			resp, err := a.response()
			if err != nil {
				return
			}
			// The reply goes back as input without trouble.
			appendInput(nil, resp.Message)
			return
		}
	})
}
