package browser_test

import (
	"fmt"
	"log"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/browser"
)

// Chromium starts on the first call, not here.
func ExampleNewBrowser() {
	// snippet:browser
	b := browser.NewBrowser()
	agent, err := onion.NewAgent("browser", b) // Agent.Close closes b
	// end snippet:browser
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	fmt.Println(len(agent.Tools().All()), "tools")
	// Output: 9 tools
}
