package loop_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/loop"
)

// strictTemplate checks msgs the way the strict chat templates of the
// Mistral family check a conversation before they render it: the
// templates models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja
// and Mistral-Small-3.2-24B-Instruct-2506.jinja of llama.cpp (commit
// 80fb11ac73e66d89eae2c6a91d8a77428fa733ed, as node-llama-cpp 3.21.1
// bundles it). Both drop a leading system message, then walk the rest
// skipping tool messages and assistant messages that carry tool_calls:
// what is left must go user, assistant, user, … from a user turn, or they
// raise "After the optional system message, conversation roles must
// alternate user/assistant/user/assistant/...". Nemo also raises on any
// other system message. The Tool call IDs of length 9 Nemo also wants are
// the model's own to give, not the loop's, and are not checked. A tool
// message must answer a call of the assistant message before it (the
// servers' rule, which the Responses API and OpenAI check too), and a
// request ends on a user or tool turn.
func strictTemplate(msgs []loop.Message) error {
	if len(msgs) == 0 {
		return errors.New("no messages")
	}
	rest := msgs
	if msgs[0].Role == loop.RoleSystem {
		rest = msgs[1:]
	}
	index := 0
	open := map[string]bool{} // the calls of the last assistant message not yet answered
	for i, m := range rest {
		switch {
		case m.Role == loop.RoleSystem:
			return fmt.Errorf("message %d: a system message after the first", i)
		case m.Role == loop.RoleTool:
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d: tool message %q answers no open call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
			continue
		case m.Role == loop.RoleAssistant && len(m.ToolCalls) > 0:
			if len(open) > 0 {
				return fmt.Errorf("message %d: calls %v left unanswered", i, open)
			}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
			continue
		}
		if len(open) > 0 {
			return fmt.Errorf("message %d (%s): calls %v left unanswered", i, m.Role, open)
		}
		if (m.Role == loop.RoleUser) != (index%2 == 0) {
			return fmt.Errorf("message %d (%s): After the optional system message, conversation roles must alternate user/assistant/user/assistant/...", i, m.Role)
		}
		index++
	}
	if last := msgs[len(msgs)-1].Role; last != loop.RoleUser && last != loop.RoleTool {
		return fmt.Errorf("the request ends on a %s turn", last)
	}
	return nil
}

// TestStrictTemplateChecker: the checker refuses the three shapes the
// Mistral templates refused, so the tests below can fail.
func TestStrictTemplateChecker(t *testing.T) {
	sys := loop.Message{Role: loop.RoleSystem, Content: "s"}
	user := loop.Message{Role: loop.RoleUser, Content: "go"}
	calls := loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolRequest{{ID: "a", Name: "read"}}}
	result := loop.Message{Role: loop.RoleTool, ToolCallID: "a", Content: "r"}
	for name, msgs := range map[string][]loop.Message{
		"note after tool results":       {sys, user, calls, result, {Role: loop.RoleUser, Content: loop.CapNote}},
		"summary before the first turn": {sys, {Role: loop.RoleAssistant, Content: loop.SummaryPrefix + "s"}, user},
		"two user turns":                {sys, user, user},
		"orphan tool message":           {sys, user, result},
	} {
		if err := strictTemplate(msgs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := strictTemplate([]loop.Message{sys, user, calls, result}); err != nil {
		t.Error(err)
	}
}

// templateRun drives one run of l to its Finish, answering from script,
// and checks every request it sends with strictTemplate.
func templateRun(t *testing.T, l *loop.Loop, history []loop.Message, format bool, script []byte) (requests int) {
	t.Helper()
	pick := func() byte {
		if len(script) == 0 {
			return 0
		}
		b := script[0]
		script = script[1:]
		return b
	}
	var st *loop.State
	var effects []loop.Effect
	if format {
		st, effects = l.StartWithFormat("p", 1, history, "go", testFormat)
	} else {
		st, effects = l.Start("p", 1, history, "go")
	}
	now := time.Unix(0, 0)
	names := []string{"read", "write", "delete", "charge"}
	for steps := 0; steps < 500; steps++ {
		var next *loop.Effect
		for i := range effects {
			switch e := &effects[i]; e.Kind {
			case loop.Finish:
				return requests
			case loop.AskModel:
				requests++
				if err := strictTemplate(e.Request.Messages); err != nil {
					b, _ := json.MarshalIndent(e.Request.Messages, "", "  ")
					t.Fatalf("request %d (summary %v): %v\n%s", requests, e.Summary, err, b)
				}
				next = e
			case loop.RunCall, loop.AskApproval, loop.CheckAnswer:
				next = e
			}
		}
		if next == nil {
			next = &l.Pending(st)[0]
		}
		in := loop.Input{Now: now}
		now = now.Add(time.Second)
		b := pick()
		usage := loop.Usage{PromptTokens: 20 + int(b)*7, CompletionTokens: 5 + int(b%13), TotalTokens: 25 + int(b)*7 + int(b%13)}
		switch next.Kind {
		case loop.AskModel:
			msg := loop.Message{Role: loop.RoleAssistant, Content: strings.Repeat("thinking ", int(b%4))}
			if next.Summary {
				msg.Content = "the summary"
			} else if n := int(b % 4); b&0x80 == 0 && n > 0 {
				for i := range n {
					msg.ToolCalls = append(msg.ToolCalls, loop.ToolRequest{ID: fmt.Sprint("c", steps, "_", i), Name: names[(int(b)+i)%len(names)], Arguments: `{"page":1}`})
				}
			} else {
				msg.Content = `{"answer":"` + strings.Repeat("x", int(b%50)) + `"}`
			}
			in.Reply = &loop.Response{Message: msg, Usage: usage}
		case loop.RunCall:
			in.Done = &loop.Done{CallID: next.Call.ID, Output: strings.Repeat("result ", 5+int(b)*3)}
		case loop.AskApproval:
			in.Approval = &loop.Approval{CallID: next.Call.ID, Granted: b%2 == 0}
		case loop.CheckAnswer:
			in.Checked = &loop.Checked{}
			if b%3 != 0 {
				in.Checked.Problems = []string{"answer: missing"}
			}
		}
		more, err := l.Step(st, in)
		if err != nil {
			t.Fatalf("step %d: %v", steps, err)
		}
		effects = more
	}
	t.Fatal("no Finish after 500 steps")
	return requests
}

// templateConfigs are the ways a run may be configured that change what
// its requests hold: the cap's note, the budget's line and note,
// compaction of results with and without a summary.
var templateConfigs = map[string]func(*loop.Config){
	"cap":    func(c *loop.Config) { c.MaxIterations = 1 },
	"budget": func(c *loop.Config) { c.TokenBudget = 400 },
	"notes":  func(c *loop.Config) { c.CompactAfter = 300; c.MaxIterations = 4 },
	"summaries": func(c *loop.Config) {
		c.CompactAfter = 300
		c.CompactStrategy = loop.CompactSummarize
		c.MaxIterations = 4
	},
	"all": func(c *loop.Config) {
		c.MaxIterations, c.TokenBudget, c.CompactAfter, c.CompactStrategy = 2, 900, 300, loop.CompactSummarize
	},
}

// templateHistories are earlier turns a run may start from: none, a whole
// exchange, and one a compaction summarized.
var templateHistories = map[string][]loop.Message{
	"fresh": nil,
	"earlier": {
		{Role: loop.RoleUser, Content: strings.Repeat("earlier ", 100)},
		{Role: loop.RoleAssistant, ToolCalls: []loop.ToolRequest{{ID: "h1", Name: "read", Arguments: "{}"}}},
		{Role: loop.RoleTool, ToolCallID: "h1", Name: "read", Content: strings.Repeat("old ", 200)},
		{Role: loop.RoleAssistant, Content: "done before"},
	},
	"summarized": {
		{Role: loop.RoleAssistant, Content: loop.SummaryPrefix + "we read the pages"},
		{Role: loop.RoleUser, Content: "earlier"},
		{Role: loop.RoleAssistant, Content: "done before"},
	},
}

// TestEveryRequestKeepsStrictTemplates is a property test over the
// requests the loop sends: every configuration that adds to a request
// (cap, budget, compaction with and without a summary), with and without
// a typed answer (its corrective turn), from every kind of history, under
// a spread of scripted replies, and every request passes strictTemplate.
func TestEveryRequestKeepsStrictTemplates(t *testing.T) {
	scripts := [][]byte{
		{1, 1, 1, 1, 0x80, 1},
		{2, 40, 40, 3, 90, 90, 90, 0x81, 2},
		{3, 200, 200, 200, 1, 1, 1, 0x82, 0x80, 5},
		{0x80, 1, 0x80, 2, 0x80},
		{1, 255, 2, 255, 255, 3, 255, 255, 255, 0x83, 1, 0x80, 0},
	}
	seen := 0
	for cname, change := range templateConfigs {
		l := testLoop(t, change)
		for hname, history := range templateHistories {
			for _, format := range []bool{false, true} {
				for i, script := range scripts {
					t.Run(fmt.Sprintf("%s/%s/format=%v/%d", cname, hname, format, i), func(t *testing.T) {
						seen += templateRun(t, l, history, format, script)
					})
				}
			}
		}
	}
	t.Logf("%d requests checked", seen)
}

// FuzzStrictTemplates is TestEveryRequestKeepsStrictTemplates with the
// fuzzer's replies.
func FuzzStrictTemplates(f *testing.F) {
	f.Add(uint8(0), uint8(0), false, []byte{1, 1, 1, 0x80})
	f.Add(uint8(3), uint8(1), true, []byte{3, 200, 200, 200, 1, 0x80, 1})
	f.Add(uint8(4), uint8(2), true, []byte{1, 255, 2, 255, 255, 0x83, 1, 0x80, 0})
	configs, histories := slices.Sorted(maps.Keys(templateConfigs)), slices.Sorted(maps.Keys(templateHistories))
	f.Fuzz(func(t *testing.T, c, h uint8, format bool, script []byte) {
		l := testLoop(t, templateConfigs[configs[int(c)%len(configs)]])
		templateRun(t, l, templateHistories[histories[int(h)%len(histories)]], format, script)
	})
}

// TestStrictTemplateAgreesWithLlamaCpp holds strictTemplate to the real
// thing: four request bodies onion once sent, replayed against llama.cpp
// serving the Mistral-Nemo-Instruct-2407 template (oniontest's
// testdata/fixtures/llamacpp/replay). The checker must accept what the
// server accepted and refuse what it refused, for the reason it gave.
func TestStrictTemplateAgreesWithLlamaCpp(t *testing.T) {
	dir := filepath.Join("..", "oniontest", "testdata", "fixtures", "llamacpp", "replay")
	bodies, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	checked := 0
	for _, body := range bodies {
		b, err := os.ReadFile(body)
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Messages []struct {
				Role       loop.Role `json:"role"`
				Content    string    `json:"content"`
				ToolCallID string    `json:"tool_call_id"`
				ToolCalls  []struct {
					ID string `json:"id"`
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var msgs []loop.Message
		for _, m := range req.Messages {
			msg := loop.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, loop.ToolRequest{ID: c.ID})
			}
			msgs = append(msgs, msg)
		}
		out, err := os.ReadFile(strings.TrimSuffix(body, ".json") + ".mistral.out")
		if err != nil {
			t.Fatal(err)
		}
		refused := strings.Contains(string(out), "conversation roles must alternate")
		if err := strictTemplate(msgs); (err != nil) != refused {
			t.Errorf("%s: the server refused it: %v; the checker says %v", filepath.Base(body), refused, err)
		}
		checked++
	}
	if checked != 4 {
		t.Errorf("checked %d request bodies, want the 4 replayed", checked)
	}
}
