package onion

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/onionkit/onion/loop"
)

// A Conversation is one conversation with an agent: each prompt it runs
// is sent after the history so far, and each run that ends with an answer
// adds its turn to that history. The Agent holds the model, tools and
// settings; a Conversation holds only messages, the way an http.Client's
// cookie jar holds cookies, so one Agent serves any number of
// conversations at once and none sees another's messages.
//
// A Conversation is safe for use by several goroutines. Runs that overlap
// each start from the history as it was when they started and each add
// their own turn when they end. A run that fails or is canceled adds
// nothing. The zero value is not usable: make one with
// Agent.NewConversation.
type Conversation struct {
	agent *Agent

	mu      sync.Mutex // guards history and spare
	history []Message
	// spare is the State of the conversation's last run, kept (keep) for
	// the next run to build in: its Messages are history, in the array
	// the run built, and its request buffer mirrors them. Only one run
	// takes it (lease); nil when none may.
	spare *loop.State
}

// NewConversation returns an empty conversation with the agent.
func (a *Agent) NewConversation() *Conversation {
	return &Conversation{agent: a}
}

// Agent returns the agent the conversation runs its prompts with.
func (c *Conversation) Agent() *Agent { return c.agent }

// Input sends prompt through the agent's loop after the history so far and
// returns the answer.
func (c *Conversation) Input(ctx context.Context, prompt string) (string, error) {
	r, err := c.Run(ctx, prompt)
	if err != nil {
		return "", err
	}
	return r.Output, nil
}

// Run sends prompt through the agent's loop after the history so far,
// adds the turn to the history when the run ends with an answer, and
// returns what happened, as Agent.Run does.
func (c *Conversation) Run(ctx context.Context, prompt string) (*Result, error) {
	history, prev := c.lease()
	res, turn, err := c.agent.run(ctx, history, prev, prompt, nil)
	c.keep(turn)
	return res, err
}

// Stream runs prompt like Run and yields its events as Agent.Stream does.
// The turn is in the history by the time the last event (EventDone) is
// yielded.
func (c *Conversation) Stream(ctx context.Context, prompt string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		history, prev := c.lease()
		c.agent.stream(ctx, history, prev, prompt, c.keep)(yield)
	}
}

// Add appends to the conversation a run carried out elsewhere, such as a
// durable run: msgs are that run's messages from its prompt on, as its
// own conversation holds them, ending with the answer. It keeps what Run
// would have kept: the prompt and the answer, or every message with
// KeepToolHistory. It rejects msgs that do not start with the prompt (a
// user message) or have a message of unknown role, and then changes
// nothing.
func (c *Conversation) Add(msgs []Message) error {
	if len(msgs) == 0 || msgs[0].Role != RoleUser {
		return fmt.Errorf("onion: add a run to the conversation: its messages must start with the prompt, a user message")
	}
	for i, m := range msgs {
		if !m.Role.Valid() || m.Role == RoleSystem {
			return fmt.Errorf("onion: add a run to the conversation: message %d has the role %q: want user, assistant or tool", i, m.Role)
		}
	}
	answer := ""
	if last := msgs[len(msgs)-1]; last.Role == RoleAssistant {
		answer = last.Content
	}
	c.keep(runTurn{msgs: c.agent.turn(msgs, msgs[0].Content, answer)})
	return nil
}

// History returns a copy of the conversation so far, as onion's own
// messages: the prompts and answers of its runs (and their tool calls and
// results with KeepToolHistory), without the system message.
func (c *Conversation) History() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.history)
}

// lease returns the history a run starts from and, when the last run left
// its State for the next (keep), that State, which the run takes: its
// Messages are the history, and the run builds after them in its arrays
// (loop.StartAfter), copying none of them. The history is shared, not
// copied: the conversation never changes a message in place, and it is
// clipped, so that a turn another run keeps meanwhile goes on a new array
// instead of where this run builds.
func (c *Conversation) lease() ([]Message, *loop.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.spare
	c.spare = nil
	c.history = slices.Clip(c.history)
	return c.history, prev
}

// SetHistory replaces the conversation with a copy of msgs.
func (c *Conversation) SetHistory(msgs []Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history, c.spare = slices.Clone(msgs), nil
}

// Reset clears the conversation.
func (c *Conversation) Reset() { c.SetHistory(nil) }

// MarshalHistory encodes the conversation as JSON: an array of Message.
func (c *Conversation) MarshalHistory() ([]byte, error) {
	c.mu.Lock()
	history := c.history // never changed in place: no copy needed
	c.mu.Unlock()
	return json.Marshal(history)
}

// UnmarshalHistory replaces the conversation with one saved by
// MarshalHistory. It rejects a history no run could have kept — a message
// whose role is not user, assistant or tool (a system message among them:
// the agent gives its own), a tool message that answers no call of the
// assistant message before it, or answers one twice, a call left
// unanswered, a call ID over 256 bytes, images on a message that is not a
// prompt or a tool result or over the bounds of loop.CheckImages, more
// than MaxHistory messages — naming the message, and then keeps the
// conversation as it was. The
// data is not bounded here: a caller reading it from outside bounds its
// size first. SetHistory takes a program's own messages as they are.
func (c *Conversation) UnmarshalHistory(data []byte) error {
	var msgs []Message
	if err := json.Unmarshal(data, &msgs); err != nil {
		return fmt.Errorf("onion: restore conversation: %w", err)
	}
	if err := checkHistory(msgs); err != nil {
		return fmt.Errorf("onion: restore conversation: %w", err)
	}
	c.SetHistory(msgs)
	return nil
}

// MarshalJSON encodes the conversation as MarshalHistory does, so a
// Conversation can be a field of a value saved as JSON.
func (c *Conversation) MarshalJSON() ([]byte, error) { return c.MarshalHistory() }

// UnmarshalJSON restores the conversation as UnmarshalHistory does. The
// Conversation must come from NewConversation: JSON carries the messages,
// not the agent.
func (c *Conversation) UnmarshalJSON(data []byte) error {
	if c.agent == nil {
		return fmt.Errorf("onion: restore conversation: a Conversation made by Agent.NewConversation is needed, not a zero value")
	}
	return c.UnmarshalHistory(data)
}
