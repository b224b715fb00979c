package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/builtin"
	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/oniontest"
)

// costRounds is the length of the run TestCost measures.
const costRounds = 20

// costPrompt is the system prompt of the agent TestCost runs.
const costPrompt = `You look records up for the operations team.
Look each key up with lookup, one call per key, in the order given, and keep a todo item for each key you could not find.
Answer with a short list of the records, in the order asked; say which keys failed and why.
Never guess a record: if a lookup fails, say so.`

// wire is one provider's wire as TestCost drives it: the options that
// point an agent at an oniontest server speaking it, and the fields of its
// request body in the order the provider reads them into its prompt
// (tools, instructions, then the conversation), which is the order its
// prompt cache matches in.
type wire struct {
	name    string
	options func(s *oniontest.Server) []any
	fields  []string
	// strip removes what may change in earlier turns without changing the
	// prompt the model reads (Anthropic's cache breakpoints).
	strip *regexp.Regexp
}

// wires are the providers TestCost measures.
var wires = []wire{
	{name: "openai-chat", options: func(s *oniontest.Server) []any {
		return []any{onion.BaseURL(s.URL()), onion.APIKey("test-key")}
	}, fields: []string{"tools", "messages"}},
	{name: "openai-responses", options: func(s *oniontest.Server) []any {
		return []any{onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.ResponsesAPI()}
	}, fields: []string{"tools", "instructions", "input"}},
	{name: "anthropic", options: func(s *oniontest.Server) []any {
		m, err := anthropic.New("claude-sonnet-4-5", anthropic.BaseURL(s.AnthropicURL()), anthropic.APIKey("test-key"))
		if err != nil {
			panic(err)
		}
		return []any{onion.WithModel(m)}
	}, fields: []string{"tools", "system", "messages"}, strip: regexp.MustCompile(`,?"cache_control":\{[^}]*\}`)},
	{name: "gemini", options: func(s *oniontest.Server) []any {
		m, err := gemini.New("gemini-2.5-flash", gemini.BaseURL(s.GeminiURL()), gemini.APIKey("test-key"))
		if err != nil {
			panic(err)
		}
		return []any{onion.WithModel(m)}
	}, fields: []string{"tools", "systemInstruction", "contents"}},
}

// promptBytes is the part of a request body a prompt cache matches: the
// fields in w's order, each array element as sent.
func promptBytes(t *testing.T, w wire, body []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: the body is not a JSON object: %v", w.name, err)
	}
	var out []byte
	for _, f := range w.fields {
		v, ok := m[f]
		if !ok {
			continue
		}
		var elems []json.RawMessage
		if json.Unmarshal(v, &elems) == nil {
			for _, e := range elems {
				out = append(out, e...)
				out = append(out, '\n')
			}
			continue
		}
		out = append(out, v...)
		out = append(out, '\n')
	}
	if w.strip != nil {
		out = w.strip.ReplaceAll(out, nil)
	}
	return out
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// TestCost runs a 20-round tool run on each wire and prints, per wire, the
// input bytes sent over the run, the estimated input tokens, how much of
// each request's prompt is the request before it, byte for byte (what a
// provider's prompt cache can serve: OpenAI's and Gemini's automatic
// caches, Anthropic's breakpoints), so what share of each request is such
// a prefix, and the cached tokens the run's usage reports. It fails when a
// request keeps less than 95 % of the one before, none following a
// compaction (the run has none). Of the cached tokens, only oniontest's
// Gemini wire reports any (it counts the prefix shared with an earlier
// request, as the implicit cache does); the live APIs report their own.
func TestCost(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			var steps []oniontest.Step
			for i := range costRounds {
				steps = append(steps, oniontest.ToolCalls(oniontest.Call("lookup", fmt.Sprintf(`{"key":"k%d"}`, i))))
			}
			steps = append(steps, oniontest.Text("done"))
			s := oniontest.NewServer(t, steps...)
			tool, err := onion.NewTool(Lookup, onion.Read)
			if err != nil {
				t.Fatal(err)
			}
			// An agent of a realistic size: the todo list, memory and file
			// tools besides the lookup, and a system prompt of a few lines.
			more, err := builtin.Tools("todo", "memory")
			if err != nil {
				t.Fatal(err)
			}
			items := append([]any{tool, more, onion.MaxIterations(costRounds + 1), onion.SystemPrompt(costPrompt)}, w.options(s)...)
			agent, err := onion.NewAgent("cost", items...)
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			res, err := agent.Run(context.Background(), "Look up k0 to k19, one at a time.")
			if err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			if len(reqs) != costRounds+1 {
				t.Fatalf("%d requests, want %d", len(reqs), costRounds+1)
			}
			total, worstKept, worstShare := 0, 1.0, 1.0
			var prev []byte
			for i, r := range reqs {
				total += len(r.Raw)
				p := promptBytes(t, w, r.Raw)
				if i > 0 {
					k := commonPrefix(prev, p)
					kept, share := float64(k)/float64(len(prev)), float64(k)/float64(len(p))
					worstKept, worstShare = min(worstKept, kept), min(worstShare, share)
					if kept < 0.95 {
						t.Errorf("request %d keeps %.1f %% of request %d's prompt as its prefix, want at least 95 %%: it differs at %q, was %q", i, 100*kept, i-1,
							p[max(k-40, 0):min(k+40, len(p))], prev[max(k-40, 0):min(k+40, len(prev))])
					}
				}
				prev = p
			}
			t.Logf("%s: %d requests, %d input bytes (about %d tokens); each request keeps at least %.1f %% of the one before as its prefix, which is at least %.1f %% of it; cached as reported: %d of %d prompt tokens",
				w.name, len(reqs), total, total/4, 100*worstKept, 100*worstShare, res.Usage.CachedTokens, res.Usage.PromptTokens)
		})
	}
}
