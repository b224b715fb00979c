package loop

import "weak"

// This file is the runs of one conversation, one after another: each
// starts after the last one's messages without copying them, in the arrays
// the last one built, so that a run after a long conversation costs what
// its own messages cost.

// StartAfter begins a run as StartPrompt does, with prev.Messages as its
// history, in the arrays of prev: the State of an earlier run of l that
// has finished, which the caller gives up (neither it nor a copy of it may
// be stepped again). The caller may first change what prev.Messages holds
// from prev.Start on — a conversation that keeps only a run's prompt and
// answer sets prev.Messages to append(prev.Messages[:prev.Start], prompt,
// answer) — but none of the messages before prev.Start: they are mirrored
// in prev's request buffer, which the new run's requests go on from. The
// new State's Messages begin in prev.Messages' array, so the caller must
// not change those messages while the run goes (a conversation only
// appends, on an array of its own once a run builds in it). When prev has
// not finished, StartAfter is StartPrompt after a copy of prev.Messages.
func (l *Loop) StartAfter(prev *State, runID string, seed uint64, prompt Message, format *Format) (*State, []Effect) {
	if prev.Phase != Finished {
		return l.StartPrompt(runID, seed, prev.Messages, prompt, format)
	}
	history := prev.Messages
	st := &State{RunID: runID, Seed: seed, Start: len(history), Result: Result{RunID: runID},
		Messages: append(history, Message{Role: RoleUser, Content: prompt.Content, Images: prompt.Images})}
	if b, ok := l.buffers.LoadAndDelete(weak.Make(prev)); ok {
		b := b.(*buffer)
		b.rewind(min(prev.Start, len(history)))
		l.hold(st, b)
	}
	if format != nil {
		st.Answer = &Answer{Format: *format}
	}
	return st, l.ask(st, nil)
}
