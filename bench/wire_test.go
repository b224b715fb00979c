package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
)

// manyTools is how many tools BenchmarkRequestManyTools gives its agent.
const manyTools = 1000

// manyToolsSchema is the schema of each of them: four documented
// properties, about what a documented Go func of four parameters gets.
const manyToolsSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"what to look for, in the words of the user"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"how many records to return at most"},` +
	`"strict":{"type":"boolean","description":"only exact matches, no fuzzy ones"},` +
	`"since":{"type":"string","format":"date-time","description":"the oldest record to return"}},` +
	`"required":["query","limit"],"additionalProperties":false}`

// cannedReplies are the bodies a discarding server answers with, per
// path: a plain text answer of each wire.
var cannedReplies = map[string]string{
	"/v1/chat/completions": `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
	"/v1/responses":        `{"id":"r1","object":"response","model":"m","status":"completed","output":[{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"done","annotations":[]}]}],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`,
}

// discardServer reads each request's body to the end, drops it, and
// answers with the canned reply of its path: a model endpoint that costs
// the client nothing to measure, unlike oniontest, which decodes and keeps
// every request.
func discardServer(b *testing.B) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, cannedReplies[r.URL.Path])
	}))
	b.Cleanup(s.Close)
	return s
}

// BenchmarkRequestManyTools measures one model request of an agent with
// 1,000 tools, through its LanguageModel (the built-in wire: the request
// encoded, sent over loopback, the reply decoded), against a server that
// discards what it reads. One op is one request, as the loop makes it: the
// system message, the prompt, and every tool. What a request costs beyond
// its tools is BenchmarkRequestManyTools/*/tools=0.
func BenchmarkRequestManyTools(b *testing.B) {
	s := discardServer(b)
	noop := func(context.Context, json.RawMessage) (any, error) { return "ok", nil }
	var tools []any
	for i := range manyTools {
		t, err := onion.NewRawTool(fmt.Sprintf("search_records_%d", i), json.RawMessage(manyToolsSchema), noop,
			onion.Description("Searches the records of one store for what the user asks about."), onion.Read)
		if err != nil {
			b.Fatal(err)
		}
		tools = append(tools, t)
	}
	for _, wire := range []struct {
		name string
		opts []any
	}{
		{"chat", nil},
		{"responses", []any{onion.ResponsesAPI()}},
	} {
		for _, n := range []int{0, manyTools} {
			b.Run(fmt.Sprintf("%s/tools=%d", wire.name, n), func(b *testing.B) {
				items := append([]any{onion.BaseURL(s.URL + "/v1"), onion.APIKey("test-key"), onion.Model("gpt-4o-mini")}, wire.opts...)
				agent, err := onion.NewAgent("many", append(items, tools[:n]...)...)
				if err != nil {
					b.Fatal(err)
				}
				defer agent.Close()
				cfg := drive.Loop(agent).Config()
				req := &onion.Request{Model: cfg.Model, Messages: []onion.Message{
					{Role: onion.RoleSystem, Content: "You search records."},
					{Role: onion.RoleUser, Content: "Find the invoices of March."},
				}}
				for _, t := range cfg.Tools {
					req.Tools = append(req.Tools, t.Def)
				}
				model := agent.LanguageModel()
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					resp, err := model.Generate(ctx, req, nil)
					if err != nil {
						b.Fatal(err)
					}
					if resp.Message.Content != "done" {
						b.Fatalf("reply %+v", resp.Message)
					}
				}
			})
		}
	}
}
