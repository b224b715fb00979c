package telemetry_test

import (
	"context"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/telemetry"
)

// TestProviderAttributes: a provider's model given with WithModel names
// its provider and model in the spans, as the built-in client does.
func TestProviderAttributes(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("hi"), oniontest.Text("hi"))
	am, err := anthropic.New("claude-sonnet-4-5", anthropic.BaseURL(s.AnthropicURL()), anthropic.APIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	gm, err := gemini.New("gemini-2.5-flash", gemini.BaseURL(s.GeminiURL()), gemini.APIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m              onion.LanguageModel
		provider, name string
	}{{am, "anthropic", "claude-sonnet-4-5"}, {gm, "gcp.gemini", "gemini-2.5-flash"}} {
		r := newRig(t)
		a, err := onion.NewAgent("p", onion.WithModel(c.m), r.option(false))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Run(context.Background(), "hi"); err != nil {
			t.Fatal(err)
		}
		chat := r.onionSpans()["chat "+c.name]
		if chat == nil {
			t.Fatalf("no span chat %s among %v", c.name, r.onionSpans())
		}
		if got := attrs(chat)[telemetry.ProviderName].AsString(); got != c.provider {
			t.Errorf("%s: provider %q, want %q", c.name, got, c.provider)
		}
	}
}
