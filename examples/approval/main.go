// Approval shows a tool that must ask a person before it runs. The
// //onion:approve directive on SaveNote makes every call of it wait for the
// agent's approver; onion.TerminalApprover shows the call and its arguments
// and reads y or n from the terminal. A call that is refused does not run,
// and the model is told so (its outcome is "denied").
//
//	OPENAI_API_KEY=sk-... go run ./examples/approval
//	OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2 go run ./examples/approval
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"sync"

	"github.com/onionkit/onion"
)

const prompt = "Save a note called 'groceries' with: eggs, milk, bread."

// Notes is a small notebook. Reading is free; saving asks first.
type Notes struct {
	mu    sync.Mutex // guards notes and saves
	notes map[string]string
	saves int // how many times SaveNote ran
}

// SaveNote saves a note under a name, replacing any note of that name.
//
// name: a short name for the note, such as "groceries"
// text: the whole text of the note
//
//onion:approve
func (n *Notes) SaveNote(name, text string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.notes == nil {
		n.notes = map[string]string{}
	}
	n.notes[name] = text
	n.saves++
	return nil
}

// ReadNote returns the text of a saved note.
//
// name: the note's name
//
//onion:intent read
func (n *Notes) ReadNote(name string) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	text, ok := n.notes[name]
	if !ok {
		return "", fmt.Errorf("no note called %q", name)
	}
	return text, nil
}

// summary says which notes are saved and how often SaveNote ran.
func (n *Notes) summary() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	names := []string{}
	for k := range n.notes {
		names = append(names, k)
	}
	sort.Strings(names)
	return fmt.Sprintf("save_note ran %d time(s); notes: %v", n.saves, names)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

// run is the program, with the terminal passed in so that a test can answer
// the question and run it against oniontest.
func run(ctx context.Context, in io.Reader, out io.Writer) error {
	if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		return errors.New("no model: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server such as http://localhost:11434/v1")
	}
	notes := &Notes{}
	agent, err := onion.NewAgent("notes", notes,
		onion.Approver(onion.TerminalApprover(in, out)),
		onion.SystemPrompt("You keep the user's notes. If saving is refused, say so; do not claim it was saved."))
	if err != nil {
		return err
	}
	defer agent.Close()

	fmt.Fprintf(out, "> %s\n", prompt)
	res, err := agent.Run(ctx, prompt)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, res.Output)
	for _, c := range res.ToolCalls {
		fmt.Fprintf(out, "call %s(%s): %s after %d attempt(s)\n", c.Name, c.Arguments, c.Outcome, c.Attempts)
	}
	fmt.Fprintln(out, notes.summary())
	return nil
}
