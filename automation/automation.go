package automation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// This file is what an automation is, what a Scheduler does with one, and
// the limits a new one must keep.

// Automation is input scheduled for an agent: at each fire the agent named
// Agent gets Input in a fresh run, as if the user had typed it then.
type Automation struct {
	// ID names the automation to List and Cancel; the Scheduler sets it.
	ID string `json:"id"`
	// Agent is the name of the agent that runs Input.
	Agent string `json:"agent"`
	// Input is what the agent is told at each fire.
	Input string `json:"input"`
	// Schedule is when it fires.
	Schedule Schedule `json:"schedule"`
	// IdempotencyKey is the key of the tool call that created it
	// (of the Call onion.CallInfo(ctx) returns): Create called twice with one
	// key makes one automation.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Created is when the Scheduler accepted it.
	Created time.Time `json:"created"`
	// Runs counts the runs it has started.
	Runs int `json:"runs"`
	// Next is its next fire, as its Scheduler last knew it; zero when it
	// has none.
	Next time.Time `json:"next,omitzero"`
	// Ended is when the automation stopped being active; zero while it is.
	// Local remembers the last MaxEnded automations made with an
	// IdempotencyKey that ended, and Create returns such a one, making
	// none, for a repeat of the call that made it: a retried call neither
	// schedules again what already ran nor brings back what was canceled.
	Ended time.Time `json:"ended,omitzero"`
	// Canceled says an ended automation was canceled; one that ended
	// otherwise had no fire left (Runs says how many ran).
	Canceled bool `json:"canceled,omitempty"`
}

// Fires returns up to n fires of a after t: Schedule.Next, with the runs
// MaxRuns still allows.
func (a Automation) Fires(t time.Time, n int) []time.Time {
	if a.Schedule.MaxRuns > 0 {
		n = min(n, a.Schedule.MaxRuns-a.Runs)
	}
	var out []time.Time
	for len(out) < n {
		t = a.Schedule.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// Scheduler keeps automations and fires them. Create validates and
// normalizes a new automation (see Limits.Admit) and returns it as stored,
// or, when one with the same IdempotencyKey exists, returns that one and
// makes none (Local also returns one that has ended since, with Ended
// set: see Automation.Ended); List returns the active automations; Cancel removes one, so
// that it fires no more. Local is the in-process Scheduler; package
// github.com/onionkit/onion/temporal has one on Temporal Schedules.
type Scheduler interface {
	Create(ctx context.Context, a Automation) (Automation, error)
	List(ctx context.Context) ([]Automation, error)
	Cancel(ctx context.Context, id string) error
}

// ErrRefused is wrapped by the errors of a Scheduler that will not take an
// automation: a schedule it cannot keep, or a limit reached. The message
// says what to change, for the model to act on.
var ErrRefused = errors.New("automation refused")

// ErrNotFound is wrapped by Cancel's error for an ID no active automation
// has.
var ErrNotFound = errors.New("no such automation")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// maxInput bounds an automation's input, which is stored and sent to the
// model at every fire.
const maxInput = 8 << 10

// Limits bound what a Scheduler accepts. The zero value means the
// defaults.
type Limits struct {
	// MinInterval is the shortest time allowed between two fires of one
	// automation (default one minute).
	MinInterval time.Duration
	// MaxActive is how many automations may be active at once (default
	// 100).
	MaxActive int
}

func (l Limits) withDefaults() Limits {
	if l.MinInterval <= 0 {
		l.MinInterval = time.Minute
	}
	if l.MaxActive <= 0 {
		l.MaxActive = 100
	}
	return l
}

// Admit checks a new automation at now, when active automations exist
// already, and returns it normalized (see Schedule.Normalize), with
// Created set to now and Next to its first fire. Its errors wrap
// ErrRefused and say what to change. Schedulers call it in Create.
func (l Limits) Admit(a Automation, now time.Time, active int) (Automation, error) {
	l = l.withDefaults()
	a, err := content(a)
	if err != nil {
		return Automation{}, err
	}
	if active >= l.MaxActive {
		return Automation{}, refuse("%d automations are active, the limit: cancel one the user no longer needs (list_automations shows them) before starting another", active)
	}
	s, err := a.Schedule.Normalize(now, l.MinInterval)
	if err != nil {
		return Automation{}, err
	}
	a.Schedule, a.Created, a.Runs = s, now, 0
	a.Next = s.Next(now)
	return a, nil
}

// content checks an automation's agent and input, as Admit does for a new
// one and the store for each one it loads, and returns it with both
// trimmed. Its errors wrap ErrRefused.
func content(a Automation) (Automation, error) {
	a.Agent = strings.TrimSpace(a.Agent)
	a.Input = strings.TrimSpace(a.Input)
	switch {
	case a.Agent == "":
		return Automation{}, refuse("no agent named: say which agent runs the input")
	case a.Input == "":
		return Automation{}, refuse("input is empty: give what the agent is to do at each run, as the user asked it")
	case len(a.Input) > maxInput:
		return Automation{}, refuse("input is %d bytes, over the limit of %d: shorten it", len(a.Input), maxInput)
	case !utf8.ValidString(a.Input):
		return Automation{}, refuse("input is not valid UTF-8: send plain text")
	}
	return a, nil
}
