// Package loop is the agent's loop as a deterministic state machine: the
// conversation, the rules that decide what happens next, and nothing that
// waits, dials, spawns or reads the clock.
//
// This package also defines the conversation types every runtime and
// every model wire share (Message, Request, Response, Usage); package onion
// re-exports them under the same names.
package loop
