package openai

import (
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// TestRefusal: a reply that holds a refusal, in the shapes OpenAI
// documents for structured outputs (Chat Completions' refusal member,
// whole and streamed; the Responses API's refusal part), is refused, with
// the refusal as its text, shown as it streams.
func TestRefusal(t *testing.T) {
	const words = "I'm sorry, I cannot help with that request."
	for _, tc := range []struct {
		name        string
		opts        []Option
		contentType string
		body        string
		stream      bool
	}{
		{"chat", nil, "application/json",
			`{"id":"chatcmpl-r","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"` + words + `"},"finish_reason":"stop"}]}`, false},
		{"chat streamed", nil, "text/event-stream",
			"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"},\"finish_reason\":null}]}\n\n" +
				"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I'm sorry, I cannot \"},\"finish_reason\":null}]}\n\n" +
				"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"help with that request.\"},\"finish_reason\":null}]}\n\n" +
				"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", true},
		{"responses streamed", []Option{ResponsesAPI()}, "text/event-stream",
			"data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_r\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
				"data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_r\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}\n\n" +
				"data: {\"type\":\"response.refusal.delta\",\"item_id\":\"msg_r\",\"output_index\":0,\"content_index\":0,\"delta\":\"I'm sorry, I cannot \"}\n\n" +
				"data: {\"type\":\"response.refusal.delta\",\"item_id\":\"msg_r\",\"output_index\":0,\"content_index\":0,\"delta\":\"help with that request.\"}\n\n" +
				"data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_r\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"refusal\",\"refusal\":\"" + words + "\"}]}}\n\n" +
				"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_r\",\"object\":\"response\",\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"id\":\"msg_r\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"refusal\",\"refusal\":\"" + words + "\"}]}]}}\n\n", true},
		{"responses", []Option{ResponsesAPI()}, "application/json",
			`{"id":"resp_r","object":"response","status":"completed","model":"gpt-4o","output":[{"type":"message","id":"msg_r","status":"completed","role":"assistant","content":[{"type":"refusal","refusal":"` + words + `"}]}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Replay(tc.contentType, []byte(tc.body)))
			m := newModel(t, s, tc.opts...)
			var shown strings.Builder
			var onDelta func(loop.Delta)
			if tc.stream {
				onDelta = func(d loop.Delta) { shown.WriteString(d.Text) }
			}
			resp, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: []loop.Message{userMessage("hi")}}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			if !resp.Refused() || resp.FinishReason != "refusal" || resp.Message.Content != words {
				t.Errorf("finish %q, refused %v, text %q", resp.FinishReason, resp.Refused(), resp.Message.Content)
			}
			if tc.stream && shown.String() != words {
				t.Errorf("shown %q", shown.String())
			}
		})
	}
}
