package onion_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// With gives a built agent another approver and more hooks for its own
// runs, leaving the agent as it was, and refuses options that would
// change the model.
func TestWith(t *testing.T) {
	var ran atomic.Int32
	pay, err := onion.NewTool(func(struct{}) error { ran.Add(1); return nil }, onion.Name("pay"), onion.Description("Pays."), onion.Write, onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("pay", `{}`)), oniontest.Text("paid"),
		oniontest.ToolCalls(oniontest.Call("pay", `{}`)), oniontest.Text("not paid"),
	)
	var before, after atomic.Int32
	agent, err := onion.NewAgent("shop", pay, onion.BaseURL(s.URL()), onion.APIKey("test"),
		onion.Hooks{BeforeTool: func(context.Context, onion.ToolEvent) error { before.Add(1); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	yes, err := agent.With(onion.Approver(func(context.Context, onion.Call) (bool, error) { asked++; return true, nil }),
		onion.Hooks{BeforeTool: func(context.Context, onion.ToolEvent) error {
			if before.Load() != after.Load()+1 {
				t.Error("the agent's own hook did not run first")
			}
			after.Add(1)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := yes.Run(context.Background(), "pay"); err != nil || res.ToolCalls[0].Outcome != onion.Succeeded || asked != 1 {
		t.Fatalf("the copy's run: %+v, %v, asked %d", res, err, asked)
	}
	// The agent itself still has no approver, nor the copy's hook.
	if res, err := agent.Run(context.Background(), "pay"); err != nil || res.ToolCalls[0].Outcome != onion.Denied {
		t.Fatalf("the agent's run: %+v, %v", res, err)
	}
	if ran.Load() != 1 || before.Load() != 2 || after.Load() != 1 || asked != 1 {
		t.Errorf("ran %d, the agent's hook %d, the copy's %d, asked %d", ran.Load(), before.Load(), after.Load(), asked)
	}
	if yes.Name() != "shop" || yes.Tools() != agent.Tools() {
		t.Error("the copy has another name or other tools")
	}

	for _, o := range []onion.Option{onion.Model("x"), onion.BaseURL("http://x"), onion.Strict(), onion.ResponsesAPI()} {
		if _, err := agent.With(o); err == nil || !strings.Contains(err.Error(), "give it to NewAgent") {
			t.Errorf("With accepted an option that changes the model: %v", err)
		}
	}
	if _, err := agent.With(onion.MaxIterations(0)); err == nil || !strings.Contains(err.Error(), "MaxIterations(0)") {
		t.Errorf("With(MaxIterations(0)): %v", err)
	}
}
