package onion

import (
	"context"
	"fmt"
	"slices"

	"github.com/onionkit/onion/internal/bridge"
	"github.com/onionkit/onion/loop"
)

// This file hands package drive what a runtime other than Run and Stream
// needs of an agent, through internal/bridge, so that package onion's own
// surface stays what a user types.

func init() {
	bridge.Loop = func(a any) *loop.Loop { return a.(*Agent).core }
	bridge.CallConfig = func(a any) bridge.CallSettings {
		c := a.(*Agent).callConfig()
		return bridge.CallSettings{Approver: c.Approver, Timeout: c.Timeout, MaxOutput: c.MaxOutput}
	}
	bridge.Approve = func(ctx context.Context, t, c any, s bridge.CallSettings) (bool, string) {
		return callSettings(s).Approve(ctx, t.(*Tool), c.(Call))
	}
	bridge.Attempt = func(ctx context.Context, t, c any, args string, s bridge.CallSettings) loop.Done {
		return callSettings(s).Attempt(ctx, t.(*Tool), c.(Call), args)
	}
	bridge.RunCall = func(ctx context.Context, t, c any, s bridge.CallSettings) any {
		return runOne(ctx, t.(*Tool), c.(Call), callSettings(s))
	}
	bridge.RunInfo = func(a any, runID, prompt string) any { return a.(*Agent).runInfo(runID, prompt) }
	bridge.Instrument = func(a any) any {
		if in := a.(*Agent).instrument(); in != nil {
			return in
		}
		return nil
	}
	bridge.Run = func(a any) bridge.RunSettings {
		c := a.(*Agent).cfg
		return bridge.RunSettings{Retries: c.retries, BackoffMin: c.backoffMin, BackoffMax: c.backoffMax,
			MaxRetryAfter: c.maxRetryAfter, Hooks: slices.Clone(c.hooks), Logger: c.logger}
	}
	bridge.PromptImages = promptImages
	bridge.ResultOf = func(lr loop.Result) any { return resultOf(lr) }
	bridge.CallOf = func(runID string, c loop.Call) any { return callOf(runID, c) }
	bridge.SubAgents = func(a any) []any {
		subs := a.(*Agent).subs
		out := make([]any, len(subs))
		for i, s := range subs {
			out[i] = s
		}
		return out
	}
	bridge.SubTask = func(t any, args string, history []loop.Message) (string, error) {
		sub := t.(*Tool).sub
		if sub == nil {
			return "", fmt.Errorf("tool %q is no agent given as a tool", t.(*Tool).name)
		}
		return sub.subTask(context.Background(), args, sub.summaryFor(history))
	}
	bridge.SubAnswer = func(a any) any {
		if at := a.(*Agent).cfg.output; at != nil {
			return at.spec()
		}
		return nil
	}
	bridge.SubOutput = func(a any, output string) (string, error) { return a.(*Agent).subOutput(nil, output) }
	bridge.SubAgent = func(t any) any {
		if sub := t.(*Tool).sub; sub != nil {
			return sub
		}
		return nil
	}
}

// callSettings is the callConfig of s.
func callSettings(s bridge.CallSettings) callConfig {
	approver, _ := s.Approver.(func(context.Context, Call) (bool, error))
	return callConfig{Approver: approver, Timeout: s.Timeout, MaxOutput: s.MaxOutput}
}
