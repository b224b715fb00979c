package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// Greet returns a greeting for a person.
//
// name: the person's name
//
//onion:intent read
func Greet(name string) string { return "Hello, " + name + "!" }

// A documented func becomes an MCP tool; here the SDK's own client lists
// and calls it over an in-memory connection.
func ExampleNew() {
	ctx := context.Background()
	server, err := mcpserver.New(&mcp.Implementation{Name: "greeter", Version: "v1.0.0"}, Greet)
	if err != nil {
		log.Fatal(err)
	}
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1.0.0"}, nil)
	cs, err := client.Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range list.Tools {
		schema, _ := json.Marshal(t.InputSchema)
		fmt.Printf("%s (read-only: %v): %s\n%s\n", t.Name, t.Annotations.ReadOnlyHint, t.Description, schema)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// greet (read-only: true): Returns a greeting for a person.
	// {"additionalProperties":false,"properties":{"name":{"description":"the person's name","type":"string"}},"required":["name"],"type":"object"}
	// Hello, Ada!
}

// The whole main of a stdio MCP server.
func ExampleServeStdio() {
	if err := mcpserver.ServeStdio(context.Background(), Greet); err != nil {
		log.Fatal(err)
	}
}

// Serving the same tools over streamable HTTP.
func ExampleHandler() {
	h, err := mcpserver.Handler(Greet)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/mcp", h)
	log.Fatal(http.ListenAndServe("localhost:8080", nil))
}

// Refund returns money to a customer. Every call waits for approval: the
// MCP client's user is asked (through elicitation) unless the program
// decides itself, as here.
//
// order: the order to refund
// cents: how much
//
//onion:approve
func Refund(order string, cents int) string { return "refunded" }

// A program that decides the calls needing approval itself, instead of
// asking the MCP client's user.
func ExampleApprover() {
	approve := func(ctx context.Context, c onion.Call) (bool, error) {
		var args struct{ Cents int }
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			return false, err
		}
		return args.Cents <= 5000, nil // small refunds only
	}
	if err := mcpserver.ServeStdio(context.Background(), Refund, mcpserver.Approver(approve)); err != nil {
		log.Fatal(err)
	}
}
