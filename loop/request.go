package loop

import (
	"runtime"
	"slices"
	"weak"
)

// This file builds the model requests of a run. A request is the whole
// conversation, sent again every round: the system message, State.Messages
// in the shape strict chat templates accept (alternate.go), and a note to
// the model at the end. Copying a long conversation into each request
// would cost more than sending it, so each State has a request buffer that
// every request extends with only the messages that are new, writing again
// from the first one that changed: the message the last request's note was
// added to, the messages after a conversation's last run (see StartAfter),
// or all of them when State.Messages is another slice than it was (a
// compaction, a decoded State, an append that moved the array). A
// request's Messages are that buffer: they stay as they are until the
// run's next Step (see Effect.Request).
//
// The buffer is kept beside its State, not in it, so that a State stays
// plain data — JSON and reflect.DeepEqual see the same State with or
// without it — and a copy of a State builds its own: the Loop holds each
// State's buffer by a weak pointer to the State, and drops it once the
// State is garbage.

// buffer is the request buffer of one State.
type buffer struct {
	// msgs are the system message, then the messages of the conversation
	// as alternate shapes them, then room; the last request's note is on
	// msgs[noted] or after msgs[:out].
	msgs []Message
	from *Message // &State.Messages[0] when mirrored
	src  int      // the messages of State.Messages mirrored
	out  int      // the messages of msgs that mirror them, the system message included
	// first is the index in State.Messages of the first message sent as a
	// user turn, -1 before one; joins are the indices of the user messages
	// joined to the turn before them, in order.
	first int
	joins []int
	// noted is the index in msgs of the message the last request's note
	// was added to, 0 for none, and plain that message without it.
	noted int
	plain Message
	// sent is the length of the last request, 0 when b has changed
	// since, and note its note.
	sent int
	note string
}

// request is the model request for the conversation so far, its messages
// in st's request buffer.
func (l *Loop) request(st *State) *Request {
	req := &Request{Model: l.cfg.Model, Temperature: l.cfg.Temperature}
	var note string
	switch {
	case l.withTools(st):
		req.Tools = l.defs
	case st.OverBudget:
		note = BudgetNote
	case len(l.cfg.Tools) > 0:
		note = CapNote
	}
	if l.cfg.TokenBudget > 0 {
		note = joinNotes(note, BudgetLine(l.budgetLeft(st), l.cfg.TokenBudget))
	}
	if st.Answer != nil {
		f := st.Answer.Format
		req.Format = &f
	}
	req.Messages = l.buffer(st).request(l.system, st.Messages, note)
	return req
}

// request brings b up to date with msgs, the conversation, and returns the
// messages of its request: the system message, msgs as alternate shapes
// them, and note at the end. A request asked for again, with nothing new,
// writes nothing.
func (b *buffer) request(system string, msgs []Message, note string) []Message {
	if b.sent > 0 && len(msgs) == b.src && len(msgs) > 0 && &msgs[0] == b.from && note == b.note {
		return b.msgs[:b.sent:b.sent]
	}
	b.unnote()
	switch {
	case b.out == 0:
		// Room for the conversation and what comes after it, as append
		// would leave, in one allocation.
		b.msgs = append(make([]Message, 0, len(msgs)+len(msgs)/4+8), Message{Role: RoleSystem, Content: system})
		b.out, b.src, b.first = 1, 0, -1
	case len(msgs) == 0 || &msgs[0] != b.from:
		b.rewind(0)
	default:
		b.rewind(len(msgs))
	}
	b.alternate(msgs)
	b.from = nil
	if len(msgs) > 0 {
		b.from = &msgs[0]
	}
	n := b.out
	if note != "" {
		n = b.withNote(note)
	}
	b.sent, b.note = n, note
	return b.msgs[:n:n]
}

// unnote puts back the message the last request's note was added to.
func (b *buffer) unnote() {
	if b.noted > 0 {
		b.msgs[b.noted], b.plain = b.plain, Message{}
		b.noted = 0
	}
}

// rewind forgets what b mirrors from message s of the conversation on. A
// user message joined to the turn before it is mirrored with that turn,
// so b goes back to where the turn began.
func (b *buffer) rewind(s int) {
	if s >= b.src {
		return
	}
	b.unnote()
	k, joined := slices.BinarySearch(b.joins, s)
	for joined {
		s--
		k, joined = slices.BinarySearch(b.joins[:k], s)
	}
	b.joins = b.joins[:k]
	b.out, b.src = 1+s-k, s
	if b.first >= s {
		b.first = -1
	}
	b.sent = 0
}

// buffer returns the request buffer of st, a new one the first time.
func (l *Loop) buffer(st *State) *buffer {
	k := weak.Make(st)
	if b, ok := l.buffers.Load(k); ok {
		return b.(*buffer)
	}
	b := &buffer{}
	l.hold(st, b)
	return b
}

// hold keeps b as the request buffer of st, until st is garbage.
func (l *Loop) hold(st *State, b *buffer) {
	k := weak.Make(st)
	l.buffers.Store(k, b)
	runtime.AddCleanup(st, func(k weak.Pointer[State]) { l.buffers.Delete(k) }, k)
}
