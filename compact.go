package onion

import (
	"fmt"
	"slices"

	"github.com/onionkit/onion/loop"
)

// This file holds the options of context compaction. The rules are the
// loop's (package loop, compact.go), so that every runtime compacts alike.

// CompactStrategy says how far compaction goes: see CompactWith.
type CompactStrategy = loop.CompactStrategy

// The strategies of compaction.
const (
	// CompactSummarize replaces older tool results with one-line notes
	// and then, if the conversation is still over the threshold, has the
	// model summarize the older turns in one request, whose answer
	// replaces them. The default.
	CompactSummarize = loop.CompactSummarize
	// CompactToolResults only replaces older tool results with notes: no
	// model request is made for it.
	CompactToolResults = loop.CompactToolResults
)

// Compaction is what one compaction did: the request it made smaller, its
// estimated tokens before and after, the tool results left out and the
// messages summarized.
type Compaction = loop.Compaction

// EventCompacted reports a compaction; Event.Compaction says what was
// done. It comes before the EventIteration of the request it made smaller.
const EventCompacted EventKind = EventKind(loop.EventCompacted)

// CompactAfter makes the agent compact the conversation when the next
// model request would be over tokens tokens. The count is an estimate (a
// quarter of the bytes sent: loop.EstimateTokens) scaled by the ratio of
// the prompt tokens the server reported for the last request to its
// estimate. Once over, the older tool results are replaced with a
// one-line note, oldest first, down to half the threshold; then, if the
// request is still over (and CompactWith allows it), one more model
// request summarizes the older turns into a single message. The system
// prompt, the run's prompt and the calls of the current round with their
// results are never touched. The summary request is a model request like
// any other for retries, hooks (BeforeModel and AfterModel, WithTools
// false), telemetry and Result.Usage, but its text is not streamed.
//
// Each compaction is an EventCompacted event and is kept in
// Result.Compactions, and the compacted messages stay in the conversation,
// so that a conversation saved after the run reloads compacted. With
// ChainResponses, the first request after a compaction sends the whole
// compacted conversation instead of continuing the stored one.
func CompactAfter(tokens int) Option {
	return optionFunc(func(c *config) error {
		if tokens < 1 {
			return fmt.Errorf("onion.CompactAfter(%d): the threshold must be at least 1 token", tokens)
		}
		c.compactAfter = tokens
		return nil
	})
}

// CompactWith chooses how CompactAfter compacts (default
// CompactSummarize).
func CompactWith(s CompactStrategy) Option {
	return optionFunc(func(c *config) error {
		switch s {
		case CompactSummarize, CompactToolResults:
			c.compactStrategy = s
			return nil
		}
		return fmt.Errorf("onion.CompactWith(%q): want onion.CompactSummarize or onion.CompactToolResults", s)
	})
}

// runTurn is what a run changes in its conversation.
type runTurn struct {
	// msgs are added at the end: the prompt and the answer, or every
	// message of the run with KeepToolHistory; nil when the run failed,
	// which adds nothing.
	msgs []Message
	// st is the run's State, from the history it began with; st is nil
	// for a run carried out elsewhere (Conversation.Add).
	st   *loop.State
	from []Message
}

// keep applies t. When nothing changed the conversation while the run
// went, it becomes the run's messages before the prompt (the history as
// the run left it: compacted, if the run compacted it) and the turn, which
// is written in place of the run's messages, in the run's array; the
// run's State stays for the next run to build in (lease). Otherwise the
// history the run began with is replaced by its compacted form, the turns
// that runs overlapping it added are kept after it, and t's turn follows;
// a conversation shorter than the history the run began with (Reset or
// SetHistory while it ran) only gets the turn.
func (c *Conversation) keep(t runTurn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	compacted := t.st != nil && len(t.st.Result.Compactions) > 0
	switch {
	case t.st != nil && same(c.history, t.from):
		if t.msgs == nil && (compacted || t.st.Start != len(t.from)) {
			return // the run failed, and its array holds another history than the conversation's
		}
		t.st.Messages = append(t.st.Messages[:t.st.Start], t.msgs...)
		c.history, c.spare = t.st.Messages, t.st
		return
	case t.msgs == nil:
		return
	case t.st == nil && c.spare != nil:
		// A run from elsewhere, while no run builds after the history:
		// the turn goes after it in the last run's array too.
		c.spare.Messages = append(c.spare.Messages, t.msgs...)
		c.history = c.spare.Messages
		return
	}
	if n := len(t.from); compacted && len(c.history) >= n {
		c.history = append(slices.Clip(t.st.Messages[:t.st.Start]), c.history[n:]...)
	}
	c.history = append(c.history, t.msgs...)
	c.spare = nil
}

// same reports whether a and b are the same messages, in the same array.
func same(a, b []Message) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
