package onion_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// markup is 2,048 bytes of HTML.
var markup = strings.Repeat("<a href=/x?a=1&b=2>x</a> ", 2048/25+1)[:2048]

// fetchPage returns the page at url.
//
// url: the page's address
func fetchPage(url string) string { return markup }

// TestToolResultsNotHTMLEscaped sends a 2,048-byte tool result made of
// markup on each wire: it must go on the wire as the tool wrote it, 2,048
// bytes, not with <, > and & escaped as \u003c, \u003e and \u0026 (which
// made it 2,745 bytes), and so must the prompt.
func TestToolResultsNotHTMLEscaped(t *testing.T) {
	const prompt = "Is <b>1 < 2 && 3 > 2</b>?"
	page, err := onion.NewTool(fetchPage, onion.Name("page"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range [][]any{nil, {onion.ResponsesAPI()}} {
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("page", `{"url":"https://example.com/?a=1&b=<2>"}`)), oniontest.Text("yes"))
		a, err := onion.NewAgent("markup", append([]any{page, onion.BaseURL(s.URL()), onion.APIKey("test-key")}, w...)...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(context.Background(), prompt); err != nil {
			t.Fatal(err)
		}
		a.Close()
		reqs := s.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		raw := reqs[1].Raw
		for _, want := range []string{markup, prompt, `https://example.com/?a=1&b=<2>`} {
			if !bytes.Contains(raw, []byte(want)) {
				t.Errorf("%v: the request does not carry %.40q… unescaped:\n%.600s", w, want, raw)
			}
		}
		if bytes.Contains(raw, []byte(`\u003c`)) || bytes.Contains(raw, []byte(`\u0026`)) {
			t.Errorf("%v: the request has HTML escapes:\n%.600s", w, raw)
		}
	}
}
