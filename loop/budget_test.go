package loop_test

import (
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

func TestBudgetLineEndsEveryRequest(t *testing.T) {
	r, _ := start(t, testLoop(t, func(c *loop.Config) { c.TokenBudget = 1000 }))
	req := r.l.Pending(r.st)[0].Request
	// The prompt is the last message: the line ends it, as two user
	// messages in a row are more than some chat templates take.
	if last := req.Messages[len(req.Messages)-1]; last.Role != loop.RoleUser || last.Content != "go\n\n"+loop.BudgetLine(1000, 1000) {
		t.Errorf("first request ends with %+v", last)
	}
	if r.st.Messages[len(r.st.Messages)-1].Content != "go" {
		t.Error("the budget line changed the prompt the run keeps")
	}
	r.reply("read") // 12 tokens
	r.ok("c0")
	req = r.l.Pending(r.st)[0].Request
	if last := req.Messages[len(req.Messages)-1]; last.Role != loop.RoleTool || !strings.HasSuffix(last.Content, "\n\nToken budget: 988 of 1000 tokens left.") || len(req.Tools) == 0 {
		t.Errorf("second request ends with %+v, %d tools", last, len(req.Tools))
	}
	for _, m := range r.st.Messages {
		if strings.Contains(m.Content, "Token budget:") {
			t.Errorf("the budget line is kept in the conversation: %+v", m)
		}
	}
	plain := testLoop(t, nil)
	st, _ := plain.Start("r", 1, nil, "go")
	if req := plain.Pending(st)[0].Request; strings.Contains(req.Messages[len(req.Messages)-1].Content, "Token budget") {
		t.Error("a run without a budget got a budget line")
	}
}

func TestBudgetNoRoomForARequest(t *testing.T) {
	r, _ := start(t, testLoop(t, func(c *loop.Config) { c.TokenBudget = 30 }))
	r.reply("read") // 12 tokens; the next request, 10+2+10+2 = 24, would not fit the 18 left
	expect(t, "no room", r.step(loop.Input{Done: &loop.Done{CallID: "c0", Output: strings.Repeat("x", 40)}}), "tool_finished c0 succeeded", "finish budget")
	if res := r.st.Result; !strings.Contains(res.Output, "token budget of 30 tokens") || res.Usage.Requests != 1 || r.st.Iteration != 1 {
		t.Errorf("result %+v after %d requests", res, r.st.Iteration)
	}
}

func TestBudgetRejectsNegative(t *testing.T) {
	if _, err := loop.New(loop.Config{TokenBudget: -1}); err == nil {
		t.Error("a negative budget was accepted")
	}
}
