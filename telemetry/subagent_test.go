package telemetry_test

import (
	"context"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// Lookup finds a word in the dictionary.
//
// word: the word
//
//onion:intent read
func Lookup(word string) (string, error) { return word + ": a greeting", nil }

// TestSubAgentSpansNest: the run of an agent given as a tool, which has no
// telemetry of its own, is traced by its caller's: its invoke_agent span is
// a child of the caller's execute_tool span, and its calls' spans are
// children of it.
func TestSubAgentSpansNest(t *testing.T) {
	r := newRig(t)
	subModel := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("lookup", `{"word":"hello"}`)), oniontest.Text("A greeting."))
	leadModel := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("dictionary", `{"task":"What is hello?"}`)), oniontest.Text("Hello is a greeting."))
	sub, err := onion.NewAgent("dictionary", Lookup, onion.BaseURL(subModel.URL()), onion.APIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	lead, err := onion.NewAgent("lead", sub, onion.BaseURL(leadModel.URL()), onion.APIKey("k"), r.option(false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lead.Run(context.Background(), "What is hello?"); err != nil {
		t.Fatal(err)
	}
	byName := map[string][]string{} // span name → IDs
	parent := map[string]string{}   // span ID → parent span ID
	name := map[string]string{}     // span ID → name
	for _, s := range r.rec.Ended() {
		id := s.SpanContext().SpanID().String()
		byName[s.Name()] = append(byName[s.Name()], id)
		parent[id] = s.Parent().SpanID().String()
		name[id] = s.Name()
	}
	subRun := byName["invoke_agent dictionary"]
	if len(subRun) != 1 {
		t.Fatalf("spans %v: want one invoke_agent dictionary", byName)
	}
	if p := parent[subRun[0]]; name[p] != "execute_tool dictionary" || name[parent[p]] != "invoke_agent lead" {
		t.Errorf("the sub-run's span hangs under %q under %q; want execute_tool dictionary under invoke_agent lead", name[p], name[parent[p]])
	}
	lookup := byName["execute_tool lookup"]
	if len(lookup) != 1 || parent[lookup[0]] != subRun[0] {
		t.Errorf("the sub-agent's call is not a child of its run: %v", byName)
	}
}
