package loop_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/loop"
)

// FuzzAnswerAndBudget drives runs with a Format and a token budget, with
// replies, usages and checks the fuzzer picks, and holds the loop to its
// promises: no panic, a State that survives JSON, the format and the
// budget line on every request, never two user messages in a row, at
// most one corrective turn, tools never
// offered again once the budget cut them, a Finish within bounds.
func FuzzAnswerAndBudget(f *testing.F) {
	f.Add(uint16(500), []byte{1, 0, 40, 5, 0, 1, 0, 0})
	f.Add(uint16(60), []byte{1, 20, 5, 1, 1, 1, 200, 9})
	f.Add(uint16(1), []byte{0, 255, 255, 1, 1})
	f.Add(uint16(10000), []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1})
	f.Fuzz(func(t *testing.T, budget uint16, script []byte) {
		l := testLoop(t, func(c *loop.Config) { c.TokenBudget = int(budget) + 1 })
		pick := func() byte {
			if len(script) == 0 {
				return 0
			}
			b := script[0]
			script = script[1:]
			return b
		}
		st, effects := l.StartWithFormat("f", 1, nil, "go", testFormat)
		now := time.Unix(0, 0)
		cut := false
		for steps := 0; ; steps++ {
			if steps > 1000 {
				t.Fatal("no Finish after 1000 steps")
			}
			var next *loop.Effect
			for i := range effects {
				e := &effects[i]
				switch e.Kind {
				case loop.Finish:
					fixes := 0
					for _, m := range st.Messages {
						if strings.HasPrefix(m.Content, "Your answer does not fit") {
							fixes++
						}
					}
					if fixes > 1 {
						t.Fatalf("%d corrective turns", fixes)
					}
					return
				case loop.AskModel:
					req := e.Request
					if req.Format == nil || req.Format.Name != testFormat.Name {
						t.Fatalf("a request without the format: %+v", req)
					}
					if last := req.Messages[len(req.Messages)-1]; !strings.Contains(last.Content, "Token budget: ") {
						t.Fatalf("a request without the budget line: %+v", last)
					}
					for i := 1; i < len(req.Messages); i++ {
						if req.Messages[i].Role == loop.RoleUser && req.Messages[i-1].Role == loop.RoleUser {
							t.Fatalf("two user messages in a row: %q, %q", req.Messages[i-1].Content, req.Messages[i].Content)
						}
					}
					if cut && len(req.Tools) > 0 {
						t.Fatal("tools offered after the budget cut them")
					}
					cut = cut || st.OverBudget
				}
				if e.Kind != loop.Emit && next == nil {
					next = e
				}
			}
			if next == nil {
				t.Fatalf("nothing to answer: %s", show(effects))
			}
			rest := effects[:0:0]
			for i := range effects {
				if &effects[i] != next && effects[i].Kind != loop.Emit {
					rest = append(rest, effects[i])
				}
			}
			var in loop.Input
			switch next.Kind {
			case loop.AskModel:
				u := loop.Usage{PromptTokens: int(pick()) * 4, CompletionTokens: int(pick())}
				u.TotalTokens = u.PromptTokens + u.CompletionTokens
				msg := loop.Message{Content: `{"a":1}`}
				if pick()%2 == 1 {
					msg.ToolCalls = []loop.ToolRequest{{Name: "read", Arguments: "{}"}}
				}
				in.Reply = &loop.Response{Message: msg, Usage: u}
			case loop.RunCall:
				in.Done = &loop.Done{CallID: next.Call.ID, Output: strings.Repeat("o", int(pick()))}
			case loop.CheckAnswer:
				in.Checked = &loop.Checked{}
				if pick()%2 == 1 {
					in.Checked.Problems = []string{"bad"}
				}
			default:
				t.Fatalf("an effect of kind %s", next.Kind)
			}
			now = now.Add(time.Millisecond)
			in.Now = now
			b, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			st = new(loop.State)
			if err := json.Unmarshal(b, st); err != nil {
				t.Fatal(err)
			}
			more, err := l.Step(st, in)
			if err != nil {
				t.Fatalf("step %+v: %v", in, err)
			}
			effects = append(rest, more...)
		}
	})
}
