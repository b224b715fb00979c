package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/onionkit/onion/loop"
)

// The bytes of a reply are a server's: whatever they hold, reading them
// must end, without a panic, with a reply whose Items are JSON and whose
// text is bounded, or with an error.

// streamSeeds are event streams: those recorded, and a few broken ones.
func streamSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "recorded", "*", "*"))
	body := regexp.MustCompile(`(?s)event: message_start.*?event: message_stop\n\s*data: [^\n]*\n`)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range body.FindAll(b, -1) {
			// The cassettes indent their streams.
			f.Add(regexp.MustCompile(`(?m)^ {8}`).ReplaceAll(m, nil))
		}
	}
	for _, s := range []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":9}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
		"data: {\"type\":\"content_block_start\",\"index\":-1,\"content_block\":{\"type\":\"mystery\",\"x\":[[[[1]]]]}}\n\n",
		"event: message_start\ndata: {\"type\":\"message_start\"\n\n",
	} {
		f.Add([]byte(s))
	}
}

func FuzzStream(f *testing.F) {
	streamSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(body))}
		s := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(resp), nil)
		defer s.Close()
		deltas := 0
		r, _, err := readStream(s, func(d loop.Delta) { deltas += len(d.Text) + len(d.Reasoning) })
		if err != nil {
			return
		}
		checkReply(t, r)
		if deltas > len(body) {
			t.Errorf("%d bytes of deltas from a body of %d", deltas, len(body))
		}
	})
}

func FuzzWhole(f *testing.F) {
	f.Add([]byte(`{"id":"m","type":"message","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"a","name":"n","input":{"x":1}},{"type":"mystery","v":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1}}`))
	f.Add([]byte(`{"content":[{"type":"tool_use","input":"not an object"},{"type":"text","text":""}]}`))
	f.Add([]byte(`{"content":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var m sdk.Message
		if json.Unmarshal(body, &m) != nil {
			return
		}
		r, err := fromMessage(&m)
		if err != nil {
			return
		}
		checkReply(t, r)
	})
}

// checkReply checks what a reply made: Items that are a JSON array of
// objects, which the next request can send; calls and text within bounds.
func checkReply(t *testing.T, r *loop.Response) {
	t.Helper()
	msg := r.Message
	if len(msg.Items) > 0 {
		var blocks []map[string]json.RawMessage
		if err := json.Unmarshal(msg.Items, &blocks); err != nil {
			t.Fatalf("Items are not a JSON array of objects: %v: %s", err, msg.Items)
		}
		body, err := model(t).encode(&loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "q"}, msg}}, "m", false)
		if err != nil || !json.Valid(body) {
			t.Fatalf("the next request: %v: %s", err, body)
		}
	}
	if len(msg.ToolCalls) > maxBlocks || len(msg.Content)+len(msg.Reasoning) > maxReplyText {
		t.Fatalf("%d calls, %d bytes of text", len(msg.ToolCalls), len(msg.Content)+len(msg.Reasoning))
	}
}

// FuzzEncode: Items come back from storage (a conversation saved as JSON)
// and may be anything; the request written is JSON all the same.
func FuzzEncode(f *testing.F) {
	f.Add([]byte(`[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"x y","name":"n","input":{}}]`), "x y", `{"a":`)
	f.Add([]byte(`[1,"two",null]`), "", "")
	f.Add([]byte(`{"not":"a list"}`), "id", "{}")
	f.Fuzz(func(t *testing.T, items []byte, id, args string) {
		msgs := []loop.Message{
			{Role: loop.RoleUser, Content: "q"},
			{Role: loop.RoleAssistant, Items: items, ItemsFrom: "anthropic", ToolCalls: []loop.ToolRequest{{ID: id, Name: "n", Arguments: args}}},
			{Role: loop.RoleTool, ToolCallID: id, Content: args},
		}
		body, err := model(t).encode(&loop.Request{Messages: msgs}, "m", true)
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("not JSON: %s", body)
		}
	})
}
