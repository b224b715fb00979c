package loop

// Strict chat templates (Mistral-Nemo, Mistral-Small, Ministral; served by
// llama.cpp and vLLM) refuse a conversation whose turns do not alternate:
// after the optional system message, the user messages and the assistant
// messages without tool calls must alternate, starting with a user turn,
// and tool messages may only answer the assistant message that called
// them. The loop's state can hold two shapes those templates refuse — a
// compaction summary, an assistant message, before the first user turn,
// and a note to the model after tool messages — so every request is put
// in the shape they accept as it is built (request.go). The rewrite
// depends only on the messages it is given, so the requests of a run keep
// a stable prefix for providers' prompt caches.

// noteJoin separates a note from the text it is added to.
const noteJoin = "\n\n"

// joinNotes is the notes a and b, in that order, as one note.
func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + noteJoin + b
}

// alternate adds the messages msgs[b.src:] to the request buffer b in the
// shape strict templates accept: an assistant message without tool calls
// before the first user turn (a compaction summary) is sent as user text,
// and a user message after a user turn is joined to it, their texts
// joined and their images in order.
func (b *buffer) alternate(msgs []Message) {
	for i := b.src; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == RoleAssistant && b.first < 0 && len(m.ToolCalls) == 0 {
			m = Message{Role: RoleUser, Content: m.Content}
		}
		if m.Role == RoleUser {
			if b.first < 0 {
				b.first = i
			}
			if turn := &b.msgs[b.out-1]; turn.Role == RoleUser {
				turn.Content += noteJoin + m.Content
				if len(m.Images) > 0 { // on a new array: the state keeps the first's
					turn.Images = append(turn.Images[:len(turn.Images):len(turn.Images)], m.Images...)
				}
				b.joins = append(b.joins, i)
				continue
			}
		}
		b.msgs = append(b.msgs[:b.out], m)
		b.out++
	}
	b.src = len(msgs)
}

// withNote adds note at the end of the request b mirrors: to the last user
// message, or to the last tool message's result when the request ends with
// tool results (a user message there would follow tool results, which
// strict templates refuse), or else as a user message of its own. It
// returns the request's length. The message it changes is put back by the
// next request (unnote).
func (b *buffer) withNote(note string) int {
	n := b.out
	switch last := &b.msgs[n-1]; last.Role {
	case RoleUser, RoleTool:
		b.noted, b.plain = n-1, *last
		last.Content += noteJoin + note
		return n
	}
	b.msgs = append(b.msgs[:n], Message{Role: RoleUser, Content: note})
	return n + 1
}
