package onion

import (
	"fmt"

	"github.com/onionkit/onion/loop"
)

// This file is what a conversation restored from outside (a session file,
// a database, a peer) must be before a run starts from it: the history a
// run would have kept, nothing a model request could be steered by that no
// run wrote.

// MaxHistory bounds the messages UnmarshalHistory restores: far more than a
// conversation a model can read, few enough that a crafted file cannot
// make every run after it copy millions of messages.
const MaxHistory = 100_000

// checkHistory reports the first message of msgs a run could not have
// kept, naming it by index and saying what is wrong:
//   - a role other than user, assistant or tool: the system message comes
//     from the agent at each request, so one in a history would be a
//     second set of instructions, sent by whoever wrote the file;
//   - a tool message that answers no call of the assistant message just
//     before it (the loop adds each call's result right after the message
//     that asked for it), or answers one already answered;
//   - an assistant message whose calls are not all answered before the
//     next message that is not a tool result, or the end: a provider
//     refuses such a conversation;
//   - a call with no ID, an ID over loop.MaxCallID bytes, or two calls of one
//     message with one ID;
//   - images on a message other than a prompt (user) or a tool result, or
//     images loop.CheckImages refuses: too many or too large, of another
//     type than PNG, JPEG, GIF or WebP, data not of its stated type, both
//     data and a URL, a URL that is not http(s);
//   - more than MaxHistory messages.
func checkHistory(msgs []Message) error {
	if len(msgs) > MaxHistory {
		return fmt.Errorf("%d messages, over the limit of %d", len(msgs), MaxHistory)
	}
	var open map[string]bool // the calls of the last assistant message: ID → answered
	asked := -1              // that message's index
	unanswered := func() error {
		for _, c := range msgs[asked].ToolCalls {
			if !open[c.ID] {
				return fmt.Errorf("message %d: tool call %q (%s) is not answered by a tool message after it", asked, c.ID, clipText(c.Name))
			}
		}
		return nil
	}
	for i, m := range msgs {
		if len(m.Images) > 0 {
			if m.Role != RoleUser && m.Role != RoleTool {
				return fmt.Errorf("message %d has the role %s and carries images: only a prompt (user) or a tool result does", i, clipText(string(m.Role)))
			}
			if err := loop.CheckImages(m.Images); err != nil {
				return fmt.Errorf("message %d: %w", i, err)
			}
		}
		if m.Role != RoleTool && asked >= 0 {
			if err := unanswered(); err != nil {
				return err
			}
			open, asked = nil, -1
		}
		switch m.Role {
		case RoleUser:
		case RoleAssistant:
			if len(m.ToolCalls) == 0 {
				continue
			}
			open, asked = make(map[string]bool, len(m.ToolCalls)), i
			for _, c := range m.ToolCalls {
				switch _, dup := open[c.ID]; {
				case c.ID == "":
					return fmt.Errorf("message %d: a tool call (%s) has no ID", i, clipText(c.Name))
				case len(c.ID) > loop.MaxCallID:
					return fmt.Errorf("message %d: a tool call ID is %d bytes, over the limit of %d", i, len(c.ID), loop.MaxCallID)
				case dup:
					return fmt.Errorf("message %d: two tool calls have the ID %q", i, c.ID)
				}
				open[c.ID] = false
			}
		case RoleTool:
			answered, ok := open[m.ToolCallID]
			switch {
			case !ok:
				return fmt.Errorf("message %d: a tool message answers the call %q, which the assistant message before it did not make", i, clipText(m.ToolCallID))
			case answered:
				return fmt.Errorf("message %d: the call %q is answered twice", i, m.ToolCallID)
			}
			open[m.ToolCallID] = true
		case RoleSystem:
			return fmt.Errorf("message %d has the role system: the system prompt is the agent's, not the history's; remove the message", i)
		default:
			return fmt.Errorf("message %d has the role %q: want user, assistant or tool", i, clipText(string(m.Role)))
		}
	}
	if asked >= 0 {
		return unanswered()
	}
	return nil
}

// clipText bounds text from outside that an error quotes.
func clipText(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
