package loop_test

import (
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/onionkit/onion/loop"
)

// A runtime in a few lines: a scripted model, a tool that echoes, and the
// effects carried out one at a time.
func Example() {
	l, err := loop.New(loop.Config{Tools: []loop.Tool{{
		Def:    loop.ToolDef{Name: "echo", Parameters: json.RawMessage(`{"type":"object"}`)},
		Intent: loop.Read,
	}}})
	if err != nil {
		log.Fatal(err)
	}
	replies := []loop.Message{
		{ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "echo", Arguments: `{"say":"hi"}`}}},
		{Content: "The tool said hi."},
	}
	// snippet:drive
	st, effects := l.Start("run-1", 1, nil, "say hi")
	for len(effects) > 0 {
		e := effects[0]
		effects = effects[1:]
		in := loop.Input{Now: time.Unix(0, 0)}
		switch e.Kind {
		case loop.AskModel:
			in.Reply = &loop.Response{Message: replies[0]}
			replies = replies[1:]
		case loop.RunCall:
			in.Done = &loop.Done{CallID: e.Call.ID, Output: e.Call.Arguments}
		case loop.Emit:
			if e.Event == loop.EventIteration {
				fmt.Println("request", e.Iteration)
			} else {
				fmt.Println(e.Event, e.Call.Name)
			}
			continue
		case loop.Finish:
			fmt.Println(e.Result.Output, e.Result.Calls[0].Outcome)
			continue
		default:
			continue
		}
		more, err := l.Step(st, in)
		if err != nil {
			log.Fatal(err)
		}
		effects = append(effects, more...)
	}
	// end snippet:drive
	// Output:
	// request 1
	// tool_started echo
	// tool_finished echo
	// request 2
	// The tool said hi. succeeded
}
