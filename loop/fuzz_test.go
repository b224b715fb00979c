package loop_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/loop"
)

// FuzzLoop drives a run with replies the fuzzer writes (tool names, IDs,
// arguments) and answers the fuzzer picks (success, each kind of failure,
// approval or not, in any order of the calls in flight, a stop), and holds
// the loop to its promises: no panic, the order rule, one tool_finished per
// call, every text within MaxOutput, a State that survives JSON, and a
// Finish once every effect is answered.
func FuzzLoop(f *testing.F) {
	f.Add([]byte("read,write,read|ok,fail,ok"), []byte{0, 1, 2, 3, 4, 5})
	f.Add([]byte("refund,write,nope|ok"), []byte{1, 0, 7})
	f.Add([]byte("read,read,read,read,charge||write,delete"), []byte{2, 2, 2, 9, 3, 3, 1})
	f.Add([]byte(","+strings.Repeat("x", 300)+",read"), []byte{255})
	f.Fuzz(func(t *testing.T, script, answers []byte) {
		l := testLoop(t, func(c *loop.Config) { c.MaxOutput = 120 })
		st, effects := l.Start("f", 3, nil, "go")
		rounds := strings.Split(string(script), "|")
		now := time.Unix(0, 0)
		pick := func() byte {
			if len(answers) == 0 {
				return 0
			}
			b := answers[0]
			answers = answers[1:]
			return b
		}
		var pending []loop.Effect // effects awaiting an answer
		finished := map[string]int{}
		steps := 0
		step := func(in loop.Input) {
			now = now.Add(time.Millisecond)
			in.Now = now
			more, err := l.Step(st, in)
			if err != nil {
				t.Fatalf("step %+v: %v", in, err)
			}
			b, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			st = new(loop.State)
			if err := json.Unmarshal(b, st); err != nil {
				t.Fatal(err)
			}
			effects = append(effects, more...)
		}
		for steps = 0; steps < 10000; steps++ {
			for _, e := range effects {
				switch e.Kind {
				case loop.Emit:
					if e.Event == loop.EventToolFinished {
						finished[fmt.Sprint(e.Call.Iteration, " ", e.Call.ID)]++
						if len(e.Call.Output) > 120 {
							t.Fatalf("a %d-byte text for call %q", len(e.Call.Output), e.Call.ID)
						}
					}
				case loop.Finish:
					for id, n := range finished {
						if n != 1 {
							t.Errorf("call %q finished %d times", id, n)
						}
					}
					for _, c := range e.Result.Calls {
						if c.Outcome == "" {
							t.Errorf("call %q has no outcome", c.ID)
						}
					}
					return
				default:
					pending = append(pending, e)
				}
			}
			effects = nil
			// The order rule, on what is in flight now.
			var inflight []loop.Call
			for _, c := range st.Calls {
				if c.Outcome == "" && c.Status != loop.Waiting {
					inflight = append(inflight, c)
				}
			}
			if len(inflight) > 2 {
				t.Fatalf("%d calls in flight, MaxParallel is 2", len(inflight))
			}
			for _, c := range inflight {
				if c.Intent != loop.Read && len(inflight) > 1 {
					t.Fatalf("a %s runs alongside other calls", c.Intent)
				}
			}
			if len(pending) == 0 {
				t.Fatal("nothing to answer and no Finish")
			}
			b := pick()
			i := int(b) % len(pending)
			e := pending[i]
			pending = append(pending[:i], pending[i+1:]...)
			switch {
			case b == 255 && st.Stopping == nil && e.Kind != loop.AskModel:
				pending = append(pending, e) // answered later
				step(loop.Input{Stop: &loop.Stop{Reason: loop.StopFailed, Error: "fuzz"}})
			case e.Kind == loop.AskModel:
				var msg loop.Message
				if len(rounds) > 0 {
					for j, name := range strings.Split(rounds[0], ",") {
						if name == "" && j > 0 {
							continue
						}
						id := string(rune('a'+j%26)) + strings.Repeat("x", j/26)
						switch pick() % 5 {
						case 0:
							id = "" // some servers send none
						case 1:
							id = "a" // or the same one twice
						}
						msg.ToolCalls = append(msg.ToolCalls, loop.ToolRequest{ID: id, Name: name, Arguments: `{"k":1}`})
					}
					rounds = rounds[1:]
				}
				step(loop.Input{Reply: &loop.Response{Message: msg}})
			case e.Kind == loop.AskApproval:
				step(loop.Input{Approval: &loop.Approval{CallID: e.Call.ID, Granted: pick()%2 == 0, Reason: "fuzz"}})
			case e.Kind == loop.RunCall:
				failures := []loop.Failure{"", loop.ToolFailed, loop.BadArguments, loop.Cut, loop.NotRun}
				f := failures[int(pick())%len(failures)]
				step(loop.Input{Done: &loop.Done{CallID: e.Call.ID, Output: strings.Repeat("o", 200), Failure: f, Error: strings.Repeat("e", 200)}})
			}
		}
		t.Fatalf("no Finish after %d steps", steps)
	})
}
