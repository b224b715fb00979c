package openai

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

// endlessReply is a server whose reply never ends: each wire's chunks, or a
// JSON body, written until the client goes away.
func endlessReply(t *testing.T, stream bool, chunk string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"x","choices":[{"message":{"role":"assistant","content":"`))
		}
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte(chunk)); err != nil {
				return
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// TestReplyBounded: a reply that does not end, streamed or whole, on
// either wire, is cut at the bound with an error that says so, which is
// not sent again, and the agent holds no more of it than the bound.
func TestReplyBounded(t *testing.T) {
	defer func(n, m int64) { maxReplyBytes, maxStreamBytes = n, m }(maxReplyBytes, maxStreamBytes)
	maxReplyBytes, maxStreamBytes = 1<<20, 1<<20
	text := strings.Repeat("a", 4096)
	for _, tc := range []struct {
		name   string
		opts   []Option
		stream bool
		chunk  string
	}{
		{"chat, streamed", nil, true, `data: {"choices":[{"index":0,"delta":{"content":"` + text + `"}}]}` + "\n\n"},
		{"chat, whole", nil, false, text},
		{"responses, streamed", []Option{ResponsesAPI()}, true,
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"output_index\":0,\"content_index\":0,\"delta\":\"" + text + "\"}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := endlessReply(t, tc.stream, tc.chunk)
			m, err := New(append([]Option{BaseURL(s.URL + "/v1"), APIKey("k")}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			var onDelta func(loop.Delta)
			got := 0
			if tc.stream {
				onDelta = func(d loop.Delta) { got += len(d.Text) }
			}
			_, err = m.Generate(context.Background(), &loop.Request{Model: "m", Messages: []loop.Message{userMessage("go")}}, onDelta)
			var me *loop.ModelError
			if !errors.Is(err, loop.ErrReplyTooLarge) || !errors.As(err, &me) || me.Retryable {
				t.Fatalf("Generate = %v, want a ModelError for a reply too large, not retryable", err)
			}
			if got > 1<<20 {
				t.Errorf("%d bytes of text passed on, more than the bound", got)
			}
		})
	}
}
