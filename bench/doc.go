// Package bench compares the cost of onion's tool calls, schema derivation,
// agent loop and MCP server with hand-written code and with other Go agent
// frameworks, and measures what running read tools in parallel saves. It is
// its own module so that the frameworks it measures stay out of onion's
// go.mod. Run it with:
//
//	go test -run '^$' -bench . -benchmem
//
// or with ./run, which prints the table of medians that README.md shows,
// with the results.
package bench
