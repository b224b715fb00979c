package onion_test

import (
	"context"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// TestDeniedTextIsTheLoops holds DeniedText to what the loop tells its
// model about a denied call, so the doors that reuse it cannot drift.
func TestDeniedTextIsTheLoops(t *testing.T) {
	ran := false
	tool, err := onion.NewTool(func(struct{}) error { ran = true; return nil }, onion.Name("pay"), onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("pay", `{}`)), oniontest.Text("ok"))
	a, err := onion.NewAgent("door", tool, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Input(context.Background(), "pay"); err != nil {
		t.Fatal(err)
	}
	results := s.Requests()[1].ToolResults()
	if ran || len(results) != 1 || results[0].Content != onion.DeniedText {
		t.Fatalf("ran %v, tool results %+v; want the call denied with %q", ran, results, onion.DeniedText)
	}
}
