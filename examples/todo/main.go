// Todo shows a struct whose methods are tools: the agent is given a
// *TodoList, and every exported method of it becomes a tool sharing that one
// instance, so the list outlives each turn. Two turns of one conversation
// follow: the first plans a trip, the second asks what is left, and the
// model sees both the list and the conversation so far.
//
//	OPENAI_API_KEY=sk-... go run ./examples/todo
//	OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2 go run ./examples/todo
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/onionkit/onion"
)

// The two turns of the conversation.
var turns = []string{
	"I'm going to Lisbon on Friday. Put booking the flight, booking a hotel and packing on my list.",
	"I've booked the flight. Tick it off and tell me what is left.",
}

// TodoList is a task list kept in memory. Its exported methods are the tools.
type TodoList struct {
	mu    sync.Mutex // guards items and next
	items []Task
	next  int
}

// Task is one entry of a TodoList.
type Task struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
	Done bool   `json:"done"`
}

// Add puts a task on the todo list and returns its id.
//
// text: what is to be done, in a few words
func (l *TodoList) Add(text string) (int, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0, errors.New("text is empty: say what is to be done")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	l.items = append(l.items, Task{ID: l.next, Text: text})
	return l.next, nil
}

// Complete marks a task on the todo list as done.
//
// id: the task's id, as add or list returned it
func (l *TodoList) Complete(id int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.items {
		if l.items[i].ID == id {
			l.items[i].Done = true
			return nil
		}
	}
	return fmt.Errorf("no task %d: call list to see the ids", id)
}

// List returns every task on the todo list, done or not.
//
//onion:intent read
func (l *TodoList) List() []Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Task(nil), l.items...)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "todo:", err)
		os.Exit(1)
	}
}

// run is the program, with its output passed in so that a test can run it
// against oniontest.
func run(ctx context.Context, out io.Writer) error {
	if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		return errors.New("no model: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server such as http://localhost:11434/v1")
	}
	list := &TodoList{}
	agent, err := onion.NewAgent("todo", list,
		onion.SystemPrompt("You keep the user's todo list with the tools. Always check the list before saying what is on it."))
	if err != nil {
		return err
	}
	defer agent.Close()

	conv := agent.NewConversation() // the second turn sees the first
	for _, prompt := range turns {
		answer, err := conv.Input(ctx, prompt)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "> %s\n%s\n\n", prompt, answer)
	}
	fmt.Fprintln(out, "The list now:")
	for _, t := range list.List() {
		mark := " "
		if t.Done {
			mark = "x"
		}
		fmt.Fprintf(out, "[%s] %d. %s\n", mark, t.ID, t.Text)
	}
	return nil
}
