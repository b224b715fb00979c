package onion

import "fmt"

// This file is the token budget of a run: the option, and what hooks read
// of the tokens spent. The rules are the loop's (see loop.Config's
// TokenBudget), so every runtime that drives the agent's loop keeps them.

// TokenBudget bounds the tokens of each run, as the server reports them
// (Usage.TotalTokens, or prompt plus completion tokens when it reports no
// total), to n. Every request ends with one short line saying how much is
// left, such as "Token budget: 1234 of 5000 tokens left.". It comes last
// (a user message of its own after tool results, the last line of the
// last message when that is the prompt or another user turn), and is not
// kept in the conversation, so that the messages before it stay the same
// from request to request and the provider's prompt cache keeps serving
// them.
//
// The cost of the next round is estimated from the last one (its prompt
// and reply tokens, and the tool results since, at four bytes a token).
// When another round of tool calls and the final request after it would
// not both fit what is left, the model is asked for the final answer
// without tools, as after MaxIterations, and the run's StopReason is
// StopBudget; when not even the final request would fit, the run ends with
// a fallback answer and no further request. The first request is always
// sent, and a server that reports no usage is not held to the budget.
// Result.Usage keeps the sums; hooks read the running sum in
// ModelEvent.RunUsage and ToolEvent.RunUsage.
func TokenBudget(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("onion.TokenBudget(%d): the budget must be at least 1 token", n)
		}
		c.tokenBudget = n
		return nil
	})
}
