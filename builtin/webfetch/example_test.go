package webfetch_test

import (
	"fmt"
	"log"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/webfetch"
)

func ExampleNewWebFetch() {
	// snippet:webfetch
	agent, err := onion.NewAgent("researcher", webfetch.NewWebFetch())
	// end snippet:webfetch
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	fmt.Println(agent.Tools().All()[0].Name())
	// Output: web_fetch
}
