package loop

// Strict chat templates (Mistral-Nemo, Mistral-Small, Ministral; served by
// llama.cpp and vLLM) refuse a conversation whose turns do not alternate:
// after the optional system message, the user messages and the assistant
// messages without tool calls must alternate, starting with a user turn,
// and tool messages may only answer the assistant message that called
// them. The loop's state can hold two shapes those templates refuse — a
// compaction summary, an assistant message, before the first user turn,
// and a note to the model after tool messages — so every request is put
// in the shape they accept as it is built. The rewrite depends only on the
// messages it is given, so the requests of a run keep a stable prefix for
// providers' prompt caches.

// noteJoin separates a note from the text it is added to.
const noteJoin = "\n\n"

// withNote adds a note for the model at the end of the request msgs: to
// the last user message, or to the last tool message's result when the
// request ends with tool results (a user message there would follow tool
// results, which strict templates refuse), or else as a user message of
// its own. The messages are the request's copy: the state keeps none of
// it.
func withNote(msgs []Message, note string) []Message {
	switch last := &msgs[len(msgs)-1]; last.Role {
	case RoleUser, RoleTool:
		last.Content += noteJoin + note
		return msgs
	}
	return append(msgs, Message{Role: RoleUser, Content: note})
}

// alternate puts the request messages msgs, system message first, in the
// shape strict templates accept: an assistant message without tool calls
// before the first user turn (a compaction summary) is sent as user text,
// and consecutive user messages are sent as one, their texts joined and
// their images in order. msgs is changed in place and returned shorter
// when messages were joined.
func alternate(msgs []Message) []Message {
	out := msgs[:0]
	seenUser := false
	for _, m := range msgs {
		if m.Role == RoleAssistant && !seenUser && len(m.ToolCalls) == 0 {
			m = Message{Role: RoleUser, Content: m.Content}
		}
		if m.Role == RoleUser {
			seenUser = true
			if prev := len(out) - 1; prev >= 0 && out[prev].Role == RoleUser {
				out[prev].Content += noteJoin + m.Content
				if len(m.Images) > 0 { // on a new array: the state keeps the first's
					out[prev].Images = append(out[prev].Images[:len(out[prev].Images):len(out[prev].Images)], m.Images...)
				}
				continue
			}
		}
		out = append(out, m)
	}
	return out
}
