package onion_test

import (
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// journal counts the entries it writes.
type journal struct{ writes int }

// Write appends an entry to the journal.
//
// entry: the text of the entry
func (l *journal) Write(entry string) string {
	l.writes++
	return "written"
}

// TestCutReply: a reply cut by the output token limit is not taken for a
// whole one, on either wire (newAgent), run and streamed. Cut text ends the
// run with StopLength and the cut text as Output; cut tool calls never
// run: each is answered as skipped, saying why, and the run goes on.
func TestCutReply(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "run", true: "stream"}[stream]
		t.Run(name+"/text", func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text("The answer is forty").Truncated())
			res := runOrStream(t, newAgent(t, s, &journal{}), stream, "go")
			if res.StopReason != onion.StopLength || res.Output != "The answer is forty" {
				t.Errorf("stop reason %q, output %q; want %q and the cut text", res.StopReason, res.Output, onion.StopLength)
			}
		})
		t.Run(name+"/calls", func(t *testing.T) {
			l := &journal{}
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("write", `{"entry":"one"}`), oniontest.Call("write", `{"entry":"tw`)).Truncated(),
				oniontest.Text("done"))
			res := runOrStream(t, newAgent(t, s, l), stream, "go")
			if l.writes != 0 {
				t.Errorf("%d writes ran from a cut reply, want none", l.writes)
			}
			if res.StopReason != onion.StopNatural || res.Output != "done" || len(res.ToolCalls) != 2 {
				t.Fatalf("result %+v", res)
			}
			for _, c := range res.ToolCalls {
				if c.Outcome != onion.Skipped || !strings.Contains(c.Output, "cut by the output token limit") {
					t.Errorf("call %s: outcome %s, output %q", c.ID, c.Outcome, c.Output)
				}
			}
			if got := toolMessages(t, s, 1); len(got) != 2 {
				t.Errorf("the next request answers %d calls, want 2: %v", len(got), got)
			}
		})
	}
}
