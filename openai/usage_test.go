package openai

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// TestCachedTokensReported replays recorded replies that report prompt
// tokens served from the provider's cache, on both wires, plain and
// streamed: Usage.CachedTokens carries them.
func TestCachedTokensReported(t *testing.T) {
	fixtures := filepath.Join("..", "oniontest", "testdata", "fixtures")
	for _, tc := range []struct {
		file           string
		opts           []Option
		stream         bool
		prompt, cached int
	}{
		{"compat/deepseek_stream_text_then_tool_call.sse", nil, true, 347, 320},
		{"responses/deepseek_reasoning_function_call.json", []Option{ResponsesAPI()}, false, 366, 256},
		{"responses/deepseek_stream_reasoning_function_call.sse", []Option{ResponsesAPI()}, true, 366, 256},
		{"responses/lmstudio_function_call.json", []Option{ResponsesAPI()}, false, 1189, 891},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.ReplayFile(t, filepath.Join(fixtures, tc.file)))
			m := newModel(t, s, tc.opts...)
			var onDelta func(loop.Delta)
			if tc.stream {
				onDelta = func(loop.Delta) {}
			}
			resp, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: []loop.Message{userMessage("hi")}}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			if u := resp.Usage; u.PromptTokens != tc.prompt || u.CachedTokens != tc.cached {
				t.Errorf("usage %+v, want %d prompt tokens, %d of them cached", u, tc.prompt, tc.cached)
			}
		})
	}
}
