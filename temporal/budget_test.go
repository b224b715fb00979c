package temporal

import (
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// withUsage is reply r reporting these token counts.
func withUsage(r func(*onion.Request) (*onion.Response, error), prompt, completion int) func(*onion.Request) (*onion.Response, error) {
	return func(req *onion.Request) (*onion.Response, error) {
		resp, err := r(req)
		if resp != nil {
			resp.Usage = onion.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
		}
		return resp, err
	}
}

// TestTokenBudgetInADurableRun: the budget is the loop's rule, so a
// durable run of an agent with TokenBudget keeps it as a live one does.
func TestTokenBudgetInADurableRun(t *testing.T) {
	lookup := newTool(t, func(ctx context.Context, in struct{ SKU string }) (string, error) { return "12 in stock", nil },
		onion.Name("stock"), onion.Read)
	m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
		withUsage(calls("stock", `{"SKU":"a"}`), 300, 40),
		withUsage(text("12 left"), 400, 10),
	}}
	res := result(t, env(t, newAgent(t, m, lookup, onion.TokenBudget(1000))), input("how many?"))
	if res.StopReason != loop.StopBudget || res.Output != "12 left" || res.Usage.TotalTokens != 750 {
		t.Fatalf("result %+v", res)
	}
	sent := m.sent()
	if len(sent) != 2 || len(sent[1].Tools) != 0 {
		t.Fatalf("%d requests; the last offers %d tools", len(sent), len(sent[1].Tools))
	}
	last := sent[1].Messages[len(sent[1].Messages)-1].Content
	if !strings.HasPrefix(last, "12 in stock\n\n"+loop.BudgetNote) || !strings.HasSuffix(last, "Token budget: 660 of 1000 tokens left.") {
		t.Errorf("the last request ends with %q", last)
	}
}
