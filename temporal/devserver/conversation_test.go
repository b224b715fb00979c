package devserver_test

import (
	"context"
	"testing"

	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
)

// TestConversationAcrossDurableRuns: two durable runs in one
// onion.Conversation, the second continuing the first, and a live run
// after them in the same value: each request carries the turns before it.
func TestConversationAcrossDurableRuns(t *testing.T) {
	_, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)), oniontest.Text("3 of A1."),
		oniontest.Text("Yes, 3."),
		oniontest.Text("Still 3."))
	agent := serveAgent(t, c, model, "conv", func(ctx context.Context, tool string) (string, error) { return "3", nil })

	ctx := context.Background()
	conv := agent.NewConversation()
	if _, err := temporal.RunIn(ctx, c, "conv", conv, "How many A1?", temporal.WorkflowID("conv-1")); err != nil {
		t.Fatal(err)
	}
	if h := conv.History(); len(h) != 2 || h[0].Content != "How many A1?" || h[1].Content != "3 of A1." {
		t.Fatalf("after the first durable run: %+v", h)
	}
	if _, err := temporal.RunIn(ctx, c, "conv", conv, "Sure?", temporal.WorkflowID("conv-2")); err != nil {
		t.Fatal(err)
	}
	if _, err := conv.Run(ctx, "And now?"); err != nil {
		t.Fatal(err)
	}
	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i, want := range map[int][]string{
		2: {"How many A1?", "3 of A1.", "Sure?"},
		3: {"How many A1?", "3 of A1.", "Sure?", "Yes, 3.", "And now?"},
	} {
		var got []string
		for _, m := range reqs[i].Body.Messages {
			if m.Role != "system" {
				got = append(got, m.Content)
			}
		}
		if len(got) != len(want) {
			t.Errorf("request %d sent %q, want %q", i, got, want)
			continue
		}
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("request %d sent %q, want %q", i, got, want)
				break
			}
		}
	}
}
