package temporal

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/onionkit/onion"
)

// This file joins durable runs to onion.Conversation, the value that
// carries a conversation from one prompt to the next in every runtime.

// Continue makes the run continue the conversation conv: the run sends
// conv's history before its prompt, as conv.Run would. It reads the
// history when Start is called.
func Continue(conv *onion.Conversation) StartOption {
	return startOptionFunc(func(c *startConfig) error {
		if conv == nil {
			return fmt.Errorf("temporal.Continue: the conversation is nil")
		}
		return History(conv.History()).applyStart(c)
	})
}

// RunIn runs prompt durably in the conversation conv, with the agent of
// conv's agent's name on taskQueue: it starts the run after conv's
// history (Continue), waits for its result (Result), and when the run ends
// with an answer adds its turn to conv, as conv.Run does for a live run.
// A run that fails or is canceled adds nothing.
func RunIn(ctx context.Context, c client.Client, taskQueue string, conv *onion.Conversation, prompt string, opts ...StartOption) (*onion.Result, error) {
	if conv == nil {
		return nil, fmt.Errorf("temporal.RunIn: the conversation is nil")
	}
	history := conv.History()
	run, err := Start(ctx, c, taskQueue, conv.Agent().Name(), prompt, append(opts, History(history))...)
	if err != nil {
		return nil, err
	}
	res, err := Result(ctx, run)
	if err != nil {
		return res, err
	}
	msgs, err := Conversation(ctx, c, run.GetID())
	if err != nil {
		return res, err
	}
	if len(msgs) <= len(history) {
		return res, fmt.Errorf("temporal: run %s: its conversation has %d messages, fewer than the %d it started from", run.GetID(), len(msgs), len(history)+1)
	}
	if err := conv.Add(msgs[len(history):]); err != nil {
		return res, fmt.Errorf("temporal: run %s: %w", run.GetID(), err)
	}
	return res, nil
}
