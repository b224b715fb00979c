package builtin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Limits of a TodoList, kept small because every item is read back by the model.
const (
	maxTodoText  = 500  // bytes of one item's text
	maxTodoItems = 1000 // items in one list, done or not
)

// Item is one entry of a TodoList.
type Item struct {
	ID   int    `json:"id"`   // stable for the life of the list; never reused
	Text string `json:"text"` // what is to be done
	Done bool   `json:"done"` // whether it has been completed
}

// TodoList is a task list the model keeps for itself while it works through a
// multi-step job. Its exported methods are the tools add, list, complete and
// remove. It is safe for concurrent use and lives in memory only.
type TodoList struct {
	mu     sync.Mutex // guards items and nextID
	items  []Item     // in the order they were added
	nextID int
}

// NewTodoList returns an empty task list; give it to onion.ToolsFrom or
// builtin.Tools("todo") to hand it to an agent.
func NewTodoList() *TodoList {
	return &TodoList{nextID: 1}
}

// Add puts a new task on the todo list and returns it with its id. Use it to
// plan a multi-step job before starting, one task per step.
//
// text: what is to be done, in one short sentence
//
//onion:additive
func (l *TodoList) Add(text string) (Item, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return Item{}, errors.New("todo: text is empty: describe the task in a few words")
	case len(text) > maxTodoText:
		return Item{}, fmt.Errorf("todo: text is %d bytes, over the limit of %d: shorten it or split it into several tasks", len(text), maxTodoText)
	case !utf8.ValidString(text):
		return Item{}, errors.New("todo: text is not valid UTF-8: send plain text")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nextID == 0 { // the zero TodoList is usable too
		l.nextID = 1
	}
	if len(l.items) >= maxTodoItems {
		return Item{}, fmt.Errorf("todo: the list already holds %d tasks, the limit: remove finished ones first", maxTodoItems)
	}
	it := Item{ID: l.nextID, Text: text}
	l.nextID++
	l.items = append(l.items, it)
	return it, nil
}

// List returns every task on the todo list, done or not, in the order they
// were added.
//
//onion:intent read
func (l *TodoList) List() []Item {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Item, len(l.items)) // never nil: the model sees [] for an empty list
	copy(out, l.items)
	return out
}

// Complete marks a task on the todo list as done and returns it. Completing a
// task that is already done changes nothing.
//
// id: the id of the task, as returned by add or list
//
//onion:idempotent
func (l *TodoList) Complete(id int) (Item, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, err := l.find(id)
	if err != nil {
		return Item{}, err
	}
	l.items[i].Done = true
	return l.items[i], nil
}

// Remove deletes a task from the todo list, done or not, and says which.
//
// id: the id of the task, as returned by add or list
//
//onion:intent delete
func (l *TodoList) Remove(id int) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, err := l.find(id)
	if err != nil {
		return "", err
	}
	it := l.items[i]
	l.items = append(l.items[:i], l.items[i+1:]...)
	return fmt.Sprintf("removed task %d (%s); %d left on the list", it.ID, it.Text, len(l.items)), nil
}

// find returns the index of the item with the given id. l.mu must be held.
func (l *TodoList) find(id int) (int, error) {
	for i, it := range l.items {
		if it.ID == id {
			return i, nil
		}
	}
	if len(l.items) == 0 {
		return 0, fmt.Errorf("todo: no task with id %d: the list is empty", id)
	}
	ids := make([]string, 0, min(len(l.items), 20))
	for _, it := range l.items[:min(len(l.items), 20)] {
		ids = append(ids, strconv.Itoa(it.ID))
	}
	more := ""
	if len(l.items) > len(ids) {
		more = fmt.Sprintf(" and %d more", len(l.items)-len(ids))
	}
	return 0, fmt.Errorf("todo: no task with id %d: existing ids are %s%s (call list to see them)", id, strings.Join(ids, ", "), more)
}
