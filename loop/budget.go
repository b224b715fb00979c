package loop

import "strconv"

// This file is the token budget: a run of a Loop whose Config has a
// TokenBudget tells the model on each request how much of it is left, and
// asks for the final answer without tools once another round of tool
// calls would not leave room for it.

// BudgetNote is the last user message of the request sent without tools
// when the token budget leaves no room for another round of tool calls;
// the budget line ends it.
const BudgetNote = "The token budget leaves no room for more tool calls. Answer now from the evidence gathered above, without calling tools. Say plainly which tool calls failed or were not made, and do not invent results you did not get."

// BudgetLine ends every request of a run with a token budget: one short
// line, last, so that the messages before it stay the same from request to
// request and the provider's prompt cache keeps serving them. It is the
// last line of the last message when that is a user message, and a user
// message of its own after a tool result.
func BudgetLine(left, budget int) string {
	return "Token budget: " + strconv.Itoa(left) + " of " + strconv.Itoa(budget) + " tokens left."
}

// Spent is the tokens u counts against a budget: its total as the
// endpoint reports it, or its prompt and completion tokens when the
// endpoint reports no total.
func Spent(u Usage) int {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.PromptTokens + u.CompletionTokens
}

// budgetLeft is what is left of the run's budget, never below 0.
func (l *Loop) budgetLeft(st *State) int {
	return max(l.cfg.TokenBudget-Spent(st.Result.Usage), 0)
}

// budget decides, before the next request of st, whether it may still
// offer tools (clearing that for good when it may not) and whether it may
// be sent at all. The next request is estimated from the last reply: its
// prompt is the last prompt, the last reply and what came after it (tool
// results, at four bytes a token), and its reply is as long as the last.
// Tools are offered only when such a round and a final request after it,
// which reads that round's growth too, both fit what is left; a request
// that would not fit itself is not sent. The first request is always sent:
// nothing is known of its cost.
func (l *Loop) budget(st *State) (send bool) {
	if l.cfg.TokenBudget == 0 || st.Iteration == 0 {
		return true
	}
	left := l.cfg.TokenBudget - Spent(st.Result.Usage)
	last := st.LastUsage
	after := 0 // the bytes the model has not read yet
	for i := len(st.Messages) - 1; i >= 0 && st.Messages[i].Role != RoleAssistant; i-- {
		after += len(st.Messages[i].Content)
	}
	grow := last.CompletionTokens + bytesTokens(after)
	next := last.PromptTokens + grow + last.CompletionTokens
	tools := st.Iteration+1 <= l.cfg.MaxIterations && len(l.cfg.Tools) > 0
	if tools && !st.OverBudget && next+next+grow > left {
		st.OverBudget = true
	}
	return next <= left
}

// budgetAnswer is the answer when the budget leaves no room for the final
// request.
func (l *Loop) budgetAnswer(st *State) string {
	return "I could not finish within the token budget of " + strconv.Itoa(l.cfg.TokenBudget) + " tokens, and had no room left to ask the model for a final answer." + failedCalls(st)
}
