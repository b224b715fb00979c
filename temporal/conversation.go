package temporal

import (
	"context"
	"fmt"
	"slices"

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
	return runIn(ctx, c, taskQueue, conv, prompt, opts, "temporal.RunIn", nil)
}

// runIn is RunIn, named name for errors; accept, when set, has the last
// word on the result (AskIn's decoding of the answer): its error is
// returned and nothing is added to conv.
func runIn(ctx context.Context, c client.Client, taskQueue string, conv *onion.Conversation, prompt string,
	opts []StartOption, name string, accept func(run client.WorkflowRun, res *onion.Result) error) (*onion.Result, error) {
	if conv == nil {
		return nil, fmt.Errorf("%s: the conversation is nil", name)
	}
	history := conv.History()
	run, err := Start(ctx, c, taskQueue, conv.Agent().Name(), prompt, append(slices.Clip(opts), History(history))...)
	if err != nil {
		return nil, err
	}
	res, err := Result(ctx, run)
	if err != nil {
		return res, err
	}
	if accept != nil {
		if err := accept(run, res); err != nil {
			return res, err
		}
	}
	msgs, err := Conversation(ctx, c, run.GetID())
	if err != nil {
		return res, err
	}
	start := len(history)
	if len(res.Compactions) > 0 {
		start = compactedStart(msgs) // the history may be rewritten
	}
	if len(msgs) <= start {
		return res, fmt.Errorf("temporal: run %s: its conversation has %d messages, fewer than the %d it started from", run.GetID(), len(msgs), start+1)
	}
	if len(res.Compactions) > 0 {
		// What comes before the prompt replaces the history the run began
		// with; the turns added to conv meanwhile are kept after it.
		if now := conv.History(); len(now) >= len(history) {
			conv.SetHistory(append(slices.Clone(msgs[:start]), now[len(history):]...))
		}
	}
	if err := conv.Add(msgs[start:]); err != nil {
		return res, fmt.Errorf("temporal: run %s: %w", run.GetID(), err)
	}
	return res, nil
}

// compactedStart is the index of a compacted run's prompt in its
// conversation msgs: the last user message, since the loop adds none
// after the prompt.
func compactedStart(msgs []onion.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == onion.RoleUser {
			return i
		}
	}
	return len(msgs)
}
