package mcpclient_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"

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
	// lookup (read): Returns the capital of a country. -> Paris <nil>
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

// Connect returns the whole server: its tools, and the tools it has that
// cannot be offered, each with why (they are also logged).
func ExampleConnect() {
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

	srv, err := mcpclient.Connect(ctx, clientEnd)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	fmt.Println(srv.Name)
	for _, t := range srv.Tools {
		fmt.Println("offered:", t.Name())
	}
	for _, lo := range srv.LeftOut {
		fmt.Println("left out:", lo.Tool, "-", lo.Reason)
	}
	// Output:
	// MCP server "onion"
	// offered: lookup
}

// A stdio server that works on the user's files, told which directory it
// may use; Close ends it and every process it started.
func ExampleConnectCommand() {
	ctx := context.Background()
	cmd := exec.Command("npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes")
	cmd.Stderr = os.Stderr
	srv, err := mcpclient.ConnectCommand(ctx, cmd, mcpclient.Roots("/home/me/notes"))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	agent, err := onion.NewAgent("notes", srv.Tools)
	if err != nil {
		log.Fatal(err)
	}
	answer, err := agent.Input(ctx, "Which notes mention onions?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
}
