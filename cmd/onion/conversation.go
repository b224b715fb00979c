package main

import (
	"context"
	"iter"

	"github.com/onionkit/onion"
)

// conversation is what run and chat need of a conversation with the agent.
type conversation interface {
	Stream(ctx context.Context, prompt string) iter.Seq2[onion.Event, error]
	History() []onion.Message
	Reset()
	MarshalHistory() ([]byte, error)
	UnmarshalHistory(data []byte) error
}

// newConversation starts an empty conversation with a.
func newConversation(a *onion.Agent) conversation { return a }
