package devui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// This file holds the page's conversations: each an onion.Conversation
// with one of the agents, saved and loaded as the JSON that the onion
// command's -session file holds (Conversation.MarshalHistory).

// maxSession bounds a conversation loaded from the page, as the onion
// command bounds a -session file.
const maxSession = 16 << 20

// Bounds of the earlier turns a loaded conversation shows.
const (
	maxEarlier     = 200
	maxEarlierText = 8 << 10
	maxTitle       = 80
)

// conv is one conversation. Guarded by UI.mu.
type conv struct {
	ID    string `json:"id"`
	Agent int    `json:"agent"` // the index of its agent
	Title string `json:"title"`
	// Earlier are the turns it was loaded with, the last maxEarlier.
	Earlier []turn   `json:"earlier,omitempty"`
	Runs    []string `json:"runs"` // its runs the UI keeps
	Busy    string   `json:"busy"` // the run in flight, or ""

	c      *onion.Conversation
	titled bool // the title is the user's, or the first prompt's
}

// turn is one message of a loaded conversation, for people.
type turn struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// brief is the conversation without its earlier turns, which only a
// snapshot and the conversation's first event carry: the page keeps them.
func (cv *conv) brief() *conv {
	c := *cv
	c.Earlier = nil
	return &c
}

func (cv *conv) dropRun(id string) {
	cv.Runs = slices.DeleteFunc(cv.Runs, func(r string) bool { return r == id })
}

// newConv makes a conversation with the agent i, loaded from history (a
// saved conversation) when it is not empty.
func (u *UI) newConv(i int, title string, history json.RawMessage) (*conv, error) {
	if i < 0 || i >= len(u.agents) {
		return nil, fmt.Errorf("devui: no agent %d: there are %d", i, len(u.agents))
	}
	c := u.agents[i].run.NewConversation()
	var earlier []turn
	if len(history) > 0 && string(history) != "null" {
		if err := c.UnmarshalHistory(history); err != nil {
			return nil, fmt.Errorf("%w: give a file saved by the page or by onion run -session", err)
		}
		earlier = u.turns(c.History())
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.closed:
		return nil, errClosed
	case len(u.convs) >= u.set.limits.Conversations:
		return nil, withStatus(http.StatusTooManyRequests, fmt.Errorf("devui: %d conversations are open, the most the UI holds: delete one first", len(u.convs)))
	}
	cv := &conv{ID: u.newID("c"), Agent: i, c: c, Earlier: earlier, Runs: []string{}}
	cv.Title = fmt.Sprintf("Conversation %s", cv.ID[1:])
	if t := strings.TrimSpace(title); t != "" {
		cv.Title, cv.titled = u.scrub.text(loop.Cap(t, maxTitle)), true
	}
	u.convs = append(u.convs, cv)
	u.publish("conv", cv)
	return cv, nil
}

// turns are msgs as a loaded conversation shows them.
func (u *UI) turns(msgs []onion.Message) []turn {
	msgs = msgs[max(0, len(msgs)-maxEarlier):]
	out := make([]turn, 0, len(msgs))
	for _, m := range msgs {
		text := m.Content
		for _, c := range m.ToolCalls {
			text += "\n→ " + c.Name + " " + c.Arguments
		}
		if m.Role == onion.RoleTool {
			text = "← " + m.Name + ": " + text
		}
		out = append(out, turn{Role: string(m.Role), Text: u.scrub.text(loop.Cap(text, maxEarlierText))})
	}
	return out
}

// findConv returns the conversation id, or nil. u.mu is held.
func (u *UI) findConv(id string) *conv {
	for _, cv := range u.convs {
		if cv.ID == id {
			return cv
		}
	}
	return nil
}

// prompt runs prompt in the conversation id.
func (u *UI) prompt(id, prompt string) (*run, error) {
	prompt = strings.TrimSpace(prompt)
	if prompt == "" {
		return nil, fmt.Errorf("devui: the prompt is empty")
	}
	u.mu.Lock()
	cv := u.findConv(id)
	if cv != nil && !cv.titled {
		cv.Title, cv.titled = u.scrub.text(loop.Cap(strings.Join(strings.Fields(prompt), " "), maxTitle)), true
	}
	u.mu.Unlock()
	if cv == nil {
		return nil, fmt.Errorf("devui: no conversation %q", id)
	}
	return u.start(cv, prompt)
}

// history is the conversation id as its -session file holds it.
func (u *UI) history(id string) ([]byte, error) {
	u.mu.Lock()
	cv := u.findConv(id)
	u.mu.Unlock()
	if cv == nil {
		return nil, fmt.Errorf("devui: no conversation %q", id)
	}
	b, err := cv.c.MarshalHistory()
	if err != nil {
		return nil, fmt.Errorf("devui: encode conversation %s: %w", id, err)
	}
	return u.scrub.json(b), nil
}

// deleteConv forgets the conversation id, unless a run of it is in
// flight.
func (u *UI) deleteConv(id string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	cv := u.findConv(id)
	switch {
	case cv == nil:
		return fmt.Errorf("devui: no conversation %q", id)
	case cv.Busy != "":
		return withStatus(http.StatusConflict, fmt.Errorf("devui: conversation %s is answering a prompt (run %s): stop it first", id, cv.Busy))
	}
	u.convs = slices.DeleteFunc(u.convs, func(c *conv) bool { return c == cv })
	u.publish("conv_removed", id)
	return nil
}
