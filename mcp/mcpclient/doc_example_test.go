package mcpclient_test

import (
	"context"
	"fmt"
	"log"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpclient"
)

// connectEverything is the package doc's example, kept compiling here.
func connectEverything(ctx context.Context) error {
	// snippet:command
	tools, err := mcpclient.Command(ctx, "npx", "-y", "@modelcontextprotocol/server-everything")
	if err != nil {
		return err
	}
	agent, err := onion.NewAgent("helper", tools)
	if err != nil {
		return err
	}
	defer agent.Close() // ends the MCP session
	// end snippet:command
	fmt.Println(len(agent.Tools().All()), "tools")
	return nil
}

// A server started as a command (here with npx, which needs the network:
// this example is compiled, not run).
func ExampleCommand_doc() {
	if err := connectEverything(context.Background()); err != nil {
		log.Fatal(err)
	}
}
