package temporal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// compacting is a model for a durable run with compaction: it answers a
// summary request with a summary, a request with a summary or two tool
// results with "done", and any other with a call of stock whose arguments
// are long (so that notes are not enough). It records what it got.
type compacting struct {
	mu       sync.Mutex
	requests []*onion.Request
}

func (m *compacting) Generate(_ context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	if req.Messages[0].Content == loop.SummaryPrompt {
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: "the stock was counted"}}, nil
	}
	results, summarized := 0, false
	for _, msg := range req.Messages {
		results += map[bool]int{true: 1}[msg.Role == onion.RoleTool]
		summarized = summarized || strings.HasPrefix(msg.Content, loop.SummaryPrefix)
	}
	if results >= 2 || summarized {
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: "done"}}, nil
	}
	args := `{"SKU":"` + strings.Repeat("sku-", 1500) + `"}`
	return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant,
		ToolCalls: []onion.ToolRequest{{ID: "c" + string(rune('1'+results)), Name: "stock", Arguments: args}}}}, nil
}

func (m *compacting) sent() []*onion.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*onion.Request(nil), m.requests...)
}

func compactingAgent(t *testing.T, m *compacting) *onion.Agent {
	stock := newTool(t, func(struct{ SKU string }) (string, error) { return strings.Repeat("12 in stock. ", 500), nil },
		onion.Name("stock"), onion.Read)
	return newAgent(t, m, stock, onion.CompactAfter(3500))
}

// TestCompactAfterDurable: the workflow carries out the loop's compaction
// as the live runtime does: the summary request goes through the model
// activity, the next request carries the summary, and the conversation
// the run reports is the compacted one.
func TestCompactAfterDurable(t *testing.T) {
	m := &compacting{}
	e := env(t, compactingAgent(t, m))
	res := result(t, e, input("count it"))
	if res.Output != "done" || len(res.Compactions) != 1 || res.Compactions[0].Summarized != 2 || res.Compactions[0].ToolResults != 1 {
		t.Fatalf("output %q, compactions %+v: want one that left out a result and summarized the first round", res.Output, res.Compactions)
	}
	reqs := m.sent()
	if len(reqs) != 4 || reqs[2].Messages[0].Content != loop.SummaryPrompt || len(reqs[2].Tools) != 0 {
		t.Fatalf("%d requests; want the third to ask for the summary", len(reqs))
	}
	last := reqs[3].Messages
	if len(last) != 4 || last[1].Role != onion.RoleUser || last[1].Content != loop.SummaryPrefix+"the stock was counted\n\ncount it" || last[2].ToolCalls[0].ID != "c2" {
		t.Errorf("the request after the summary: %+v", last)
	}
	v, err := e.QueryWorkflow(conversationQuery)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []loop.Message
	if err := v.Get(&msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 5 || msgs[0].Content != loop.SummaryPrefix+"the stock was counted" || msgs[4].Content != "done" {
		t.Errorf("the run's conversation is %d messages: %+v", len(msgs), msgs)
	}
	// RunIn keeps what comes before the prompt as the rewritten history.
	if start := compactedStart(msgs); start != 1 || msgs[start].Content != "count it" {
		t.Errorf("RunIn would take the run's turn from message %d", start)
	}
	if res.Usage.Requests != 4 {
		t.Errorf("usage counts %d requests, want 4 with the summary", res.Usage.Requests)
	}
}

// TestCompactAfterContinueAsNew: a run that continues as new while it
// waits for its summary asks for it again in the next run, and goes on.
func TestCompactAfterContinueAsNew(t *testing.T) {
	m := &compacting{}
	a := compactingAgent(t, m)
	in := input("count it", HistoryBudget(5, 1<<30))
	for range 2 { // before the second request, then before the summary
		e := env(t, a)
		e.SetCurrentHistoryLength(20)
		e.ExecuteWorkflow(WorkflowName, in)
		var can *workflow.ContinueAsNewError
		if err := e.GetWorkflowError(); !errors.As(err, &can) {
			t.Fatalf("workflow error %v, want continue-as-new", err)
		}
		in = runInput{}
		if err := converterGet(can, &in); err != nil {
			t.Fatal(err)
		}
	}
	if in.State == nil || in.State.Phase != loop.AwaitingSummary {
		t.Fatalf("the next run's state: %+v, want it waiting for the summary", in.State)
	}
	in.Settings.HistoryEvents = 10_000
	res := result(t, env(t, a), in)
	if res.Output != "done" || len(res.Compactions) != 1 || res.Compactions[0].Summarized != 2 {
		t.Errorf("output %q, compactions %+v", res.Output, res.Compactions)
	}
}
