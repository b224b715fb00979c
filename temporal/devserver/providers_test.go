package devserver_test

import (
	"context"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// TestDurableRunOnEveryProvider runs the same durable run, a read and an
// answer, on a worker whose agent speaks each provider's wire to
// oniontest: the model's requests are activities whatever the provider,
// and each provider's replies survive the history's JSON.
func TestDurableRunOnEveryProvider(t *testing.T) {
	_, model, c := crashSetup(t)
	providers := []struct {
		name  string
		model func() (onion.LanguageModel, error)
	}{
		{"openai", nil},
		{"anthropic", func() (onion.LanguageModel, error) {
			return anthropic.New("claude-sonnet-4-5", anthropic.BaseURL(model.AnthropicURL()), anthropic.APIKey("test"))
		}},
		{"gemini", func() (onion.LanguageModel, error) {
			return gemini.New("gemini-2.5-flash", gemini.BaseURL(model.GeminiURL()), gemini.APIKey("test"))
		}},
	}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			model.Add(oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)), oniontest.Text("3 on "+p.name+"."))
			var opts []onion.Option
			if p.model != nil {
				m, err := p.model()
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, onion.WithModel(m))
			}
			serveAgent(t, c, model, "providers-"+p.name, func(ctx context.Context, tool string) (string, error) { return "3", nil }, opts...)
			res, err := temporal.Run(context.Background(), c, "providers-"+p.name, testagent.Name, "How many A1?")
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != "3 on "+p.name+"." || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded {
				t.Errorf("result %+v", res)
			}
		})
	}
	var wires []string
	for _, r := range model.Requests() {
		switch {
		case r.Anthropic != nil:
			wires = append(wires, "anthropic")
		case r.Gemini != nil:
			wires = append(wires, "gemini")
		default:
			wires = append(wires, "openai")
		}
	}
	if len(wires) != 6 || wires[0] != "openai" || wires[2] != "anthropic" || wires[4] != "gemini" {
		t.Errorf("the requests went on %v", wires)
	}
}
