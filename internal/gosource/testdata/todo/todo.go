// Package todo is a small to-do list that gosource's tests read.
package todo

import (
	"sync"
	"time"
)

// Priority says how urgent a task is.
type Priority string

// The priorities a task can have.
const (
	Low    Priority = "low"
	Medium Priority = `medium`
	High            = Priority("high")
	urgent Priority = "urg" + "ent"
)

// Level is how much a task matters.
type Level int

const (
	_ Level = iota
	Minor
	Major
	Critical
)

// Flag is one bit of a task's flags.
type Flag uint8

const (
	Pinned Flag = 1 << iota
	Shared
	Archived
	AllFlags = Pinned | Shared | Archived
)

// Snooze is how long a task sleeps, in hours.
type Snooze float64

const (
	Short Snooze = 1.5
	Long  Snooze = 24
)

// Default is not part of any enum: it is untyped.
const Default = 3

// Timeout's type is another package's: not an enum of this one.
const Timeout time.Duration = 5

// Task is one thing to do.
type Task struct {
	// Title says what to do.
	Title    string
	Priority Priority // Priority defaults to "low".
	// Start and End bound the task.
	Start, End time.Time
	Tags       []string
	sync.Mutex
	*Owner // who owns the task
}

// Owner is a person.
type Owner struct {
	Name string `json:"name"` // the owner's full name
}

type (
	// ID identifies a task.
	ID int64

	undocumented struct{ x int }
)

// Alias is an alias, which reflect never reports.
type Alias = Task

// TodoList holds tasks.
//
//onion:approve
type TodoList struct {
	mu    sync.Mutex
	tasks []Task
}

// Add adds a task to the list.
//
//onion:intent write
//onion:approve
func (l *TodoList) Add(title string, p Priority) (ID, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tasks = append(l.tasks, Task{Title: title, Priority: p})
	return ID(len(l.tasks)), nil
}

// Get returns the task with the given id.
//
//onion:intent read
func (l TodoList) Get(id ID) Task { return l.tasks[id-1] }

/*
Search finds tasks whose title contains query.

	It skips the first offset matches.
*/
func Search(query string, _ bool, limit, offset int) []Task { return nil }

func unnamed(int, string) {}

func init() {}

func init() {}

// List is a generic list.
type List[T any] struct{ items []T }

// Push appends v.
func (l *List[T]) Push(v T) { l.items = append(l.items, v) }

// Map applies f to each element of in.
func Map[T, U any](in []T, f func(T) U) []U { return nil }
