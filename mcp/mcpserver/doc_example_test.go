package mcpserver_test

import (
	"context"
	"log"

	"github.com/onionkit/onion/builtin"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// main is the package doc's stdio server, whole, kept compiling here (a
// test binary has its own main, so this one is never run).
//
// snippet:stdio-main
func main() {
	if err := mcpserver.ServeStdio(context.Background(), builtin.NewTodoList()); err != nil {
		log.Fatal(err)
	}
}

// end snippet:stdio-main

var _ = main
