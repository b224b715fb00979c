package mcpclient_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// Lookup returns the capital of a country.
//
// country: the country's English name
//
//onion:intent read
func Lookup(country string) string {
	if country == "France" {
		return "Paris"
	}
	return "unknown"
}

// Any MCP transport works; here the server is an onion one, reached in
// memory.
func ExampleTools() {
	ctx := context.Background()
	server, err := mcpserver.New(Lookup)
	if err != nil {
		log.Fatal(err)
	}
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()

	tools, err := mcpclient.Tools(ctx, clientEnd)
	if err != nil {
		log.Fatal(err)
	}
	agent, err := onion.NewAgent("geo", tools)
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close() // ends the MCP session

	for _, t := range tools {
		out, err := t.Call(ctx, `{"country":"France"}`)
		fmt.Printf("%s (%s): %s -> %s %v\n", t.Name(), t.Intent(), t.Description(), out, err)
	}
	// Output:
	// lookup (read): Lookup returns the capital of a country. -> Paris <nil>
}

// A stdio server, started as a subprocess.
func ExampleCommand() {
	ctx := context.Background()
	tools, err := mcpclient.Command(ctx, "npx", "-y", "@modelcontextprotocol/server-everything")
	if err != nil {
		log.Fatal(err)
	}
	agent, err := onion.NewAgent("helper", tools)
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	answer, err := agent.Input(ctx, "Add 2 and 3 with the add tool.")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
}

// A server reached over streamable HTTP.
func ExampleHTTP() {
	tools, err := mcpclient.HTTP(context.Background(), "http://localhost:8080/mcp")
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name(), t.Intent())
	}
}
