package onion_test

import (
	"context"
	"fmt"
	"log"

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
