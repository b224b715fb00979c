// Package bench compares the cost of onion's tool calls, schema derivation
// and agent loop with hand-written code and with other Go agent frameworks.
// It is its own module so that the frameworks it measures stay out of
// onion's go.mod. Run it with:
//
//	go test -run '^$' -bench . -benchmem
//
// See README.md for results.
package bench
