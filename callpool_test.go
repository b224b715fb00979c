package onion

import (
	"context"
	"strings"
	"testing"
)

type poolArgs struct {
	Name string `json:"name"`
	Note string `json:"note,omitempty"`
}

// TestPooledArgumentsStartEmpty holds the pooled argument structs of
// NewTool and NewTypedTool to what a fresh struct gives: a field one call
// set is not seen by the next call that leaves it out, nor after a call
// whose arguments were refused half-way.
func TestPooledArgumentsStartEmpty(t *testing.T) {
	echo := func(_ context.Context, a poolArgs) (string, error) { return a.Name + "|" + a.Note, nil }
	reflected, err := NewTool(echo, Name("echo"), Description("Echoes."), Read)
	if err != nil {
		t.Fatal(err)
	}
	typed, err := NewTypedTool(echo, Name("echo_typed"), Description("Echoes."), Read)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []*Tool{reflected, typed} {
		ctx := context.Background()
		if got, err := tool.Call(ctx, `{"name":"a","note":"kept?"}`); err != nil || got != "a|kept?" {
			t.Fatalf("%s: first call = %q, %v", tool.Name(), got, err)
		}
		if _, err := tool.Call(ctx, `{"note":"half","name":5}`); err == nil {
			t.Fatalf("%s: a number for name was accepted", tool.Name())
		}
		if got, err := tool.Call(ctx, `{"name":"b"}`); err != nil || got != "b|" {
			t.Errorf("%s: a call without note = %q, %v; want %q", tool.Name(), got, err, "b|")
		}
	}
}

// TestPointerArgumentIsNotReused makes sure a func that takes a pointer to
// its struct, and may keep it, gets a struct no later call writes to.
func TestPointerArgumentIsNotReused(t *testing.T) {
	var kept []*poolArgs
	keep := func(_ context.Context, a *poolArgs) error { kept = append(kept, a); return nil }
	tool, err := NewTool(keep, Name("keep"), Description("Keeps."), Read)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c"} {
		if _, err := tool.Call(context.Background(), `{"name":"`+n+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, a := range kept {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "a,b,c" {
		t.Errorf("kept arguments = %s, want a,b,c", got)
	}
}
