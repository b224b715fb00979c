package onion_test

import (
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/openai"
)

// TestOpenAIPrefixNamesTheBuiltinClient: "openai/…" is the built-in
// client with the agent's own options, the rest of the name the model
// asked for, so that an OpenRouter-style name keeps its slash; the run
// reports provider openai and the server's host.
func TestOpenAIPrefixNamesTheBuiltinClient(t *testing.T) {
	for _, w := range []struct {
		name string
		opts []any
	}{{"chat", nil}, {"responses", []any{onion.ResponsesAPI()}}} {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text("hi"))
			a, err := onion.NewAgent("a", append([]any{onion.Model("openai/meta-llama/llama-3"), onion.BaseURL(s.URL()), onion.APIKey("k")}, w.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer onion.CloseIdleConnections()
			if _, ok := a.LanguageModel().(*openai.Model); !ok {
				t.Errorf("the model is a %T, want *openai.Model", a.LanguageModel())
			}
			if _, err := a.Run(context.Background(), "hello"); err != nil {
				t.Fatal(err)
			}
			if got := s.Requests()[0].Body.Model; got != "meta-llama/llama-3" {
				t.Errorf("the request asked for model %q, want meta-llama/llama-3", got)
			}
			info := drive.RunInfo(a, "r", "hello")
			if info.Provider != "openai" || info.Model != "meta-llama/llama-3" || !strings.HasPrefix(s.URL(), "http://"+info.Server+"/") {
				t.Errorf("RunInfo = provider %q model %q server %q", info.Provider, info.Model, info.Server)
			}
		})
	}
}
