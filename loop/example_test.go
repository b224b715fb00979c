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

// A conversation of two runs: the second starts after the first, whose
// messages are cut to its prompt and answer, and whose arrays it builds
// in.
func ExampleLoop_StartAfter() {
	l, err := loop.New(loop.Config{SystemPrompt: "Be brief."})
	if err != nil {
		log.Fatal(err)
	}
	answer := func(st *loop.State, text string) {
		if _, err := l.Step(st, loop.Input{Reply: &loop.Response{Message: loop.Message{Content: text}}}); err != nil {
			log.Fatal(err)
		}
	}
	first, _ := l.StartPrompt("run-1", 1, nil, loop.Message{Content: "What is 2 + 2?"}, nil)
	answer(first, "4")
	// Keep the prompt and the answer: here the run had no other messages.
	first.Messages = first.Messages[:first.Start+2]
	second, effects := l.StartAfter(first, "run-2", 1, loop.Message{Content: "And times 3?"}, nil)
	for _, m := range effects[len(effects)-1].Request.Messages[1:] { // after the system message
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	answer(second, "12")
	fmt.Println(len(second.Messages), "messages")
	// Output:
	// user: What is 2 + 2?
	// assistant: 4
	// user: And times 3?
	// 4 messages
}
