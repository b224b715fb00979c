package onion_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"testing"

	"github.com/onionkit/onion"
)

// One method of an instance needs approval; its doc comment stays as it is.
func ExampleMethod() {
	tools, err := onion.ToolsFrom(&Shelf{}, onion.Method("Remove", onion.RequireApproval()))
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name(), t.NeedsApproval(context.Background(), onion.Call{}))
	}
	// Output:
	// add false
	// remove true
}

// A tool whose doc comment cannot be read — a binary built with -trimpath,
// run without its source or generated facts — is refused unless its
// options say everything the doc comment would: these do.
func ExampleNoApproval() {
	tool, err := onion.NewTool(Weather, onion.Description("Report the weather in a city."), onion.Read, onion.NoApproval())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tool.Intent(), tool.NeedsApproval(context.Background(), onion.Call{}))
	// Output: read false
}

// Method given to NewAgent applies to the method of that name of the
// struct instances given with it, and names their methods when none has it.
func TestMethodGivenToNewAgent(t *testing.T) {
	ctx := context.Background()
	a, err := onion.NewAgent("a", &store{}, &Shelf{}, onion.Method("Remove", onion.RequireApproval()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"put": false, "items": false, "add": false, "remove": true}
	for _, tool := range a.Tools().All() {
		if got := tool.NeedsApproval(ctx, onion.Call{}); got != want[tool.Name()] {
			t.Errorf("%s needs approval: %v, want %v", tool.Name(), got, want[tool.Name()])
		}
	}
	if len(a.Tools().All()) != len(want) {
		t.Errorf("tools %d, want %d", len(a.Tools().All()), len(want))
	}

	_, err = onion.NewAgent("a", &Shelf{}, onion.Method("Delete", onion.RequireApproval()))
	if err == nil || !strings.Contains(err.Error(), `onion.Method("Delete")`) ||
		!strings.Contains(err.Error(), "(*onion_test.Shelf).Add, (*onion_test.Shelf).Remove") {
		t.Errorf("unknown method: %v; want the methods listed", err)
	}
	_, err = onion.NewAgent("a", Greet, onion.Method("Remove", onion.RequireApproval()))
	if err == nil || !strings.Contains(err.Error(), "no struct instance") {
		t.Errorf("no instance: %v", err)
	}
	made, err := onion.ToolsFrom(&Shelf{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = onion.NewAgent("a", made, onion.Method("Remove", onion.RequireApproval()))
	if err == nil || !strings.Contains(err.Error(), "(*onion_test.Shelf).Remove is already made") {
		t.Errorf("tools already made: %v", err)
	}
}
