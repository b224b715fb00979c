package openai

import (
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// TestResponsesAPIGetsAChatReply: a server that answers the Responses API
// with a Chat Completions reply, whole or streamed, is an error saying
// so, not an empty answer.
func TestResponsesAPIGetsAChatReply(t *testing.T) {
	chat := `{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`
	chatStream := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n"
	for _, tc := range []struct {
		name, contentType, body string
		stream                  bool
	}{
		{"whole", "application/json", chat, false},
		{"streamed", "text/event-stream", chatStream, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Replay(tc.contentType, []byte(tc.body)))
			m := newModel(t, s, ResponsesAPI())
			var onDelta func(loop.Delta)
			if tc.stream {
				onDelta = func(loop.Delta) {}
			}
			resp, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: []loop.Message{userMessage("hi")}}, onDelta)
			if err == nil {
				t.Fatalf("no error; response %+v", resp)
			}
			t.Logf("error: %v", err)
			if !tc.stream && !strings.Contains(err.Error(), "not a Responses API response") {
				t.Errorf("error %q does not say the reply is not the Responses API's", err)
			}
		})
	}
}
