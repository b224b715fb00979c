package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/visible"
)

// approver decides the calls that need approval: those of the tools -approve
// names run, the others are asked about at the terminal (y/N), and denied
// when stdin is not a terminal, since nobody is there to answer.
type approver struct {
	allow  map[string]bool
	lines  *lineReader // nil when stdin is not a terminal
	status *status     // where the questions go
	mu     sync.Mutex  // one question at a time
}

// newApprover allows the comma-separated tools of names; lines is nil when
// nobody can be asked.
func newApprover(names string, lines *lineReader, st *status) *approver {
	a := &approver{allow: map[string]bool{}, lines: lines, status: st}
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			a.allow[n] = true
		}
	}
	return a
}

// check fails, as a usage error, when -approve names a tool ts does not
// have.
func (a *approver) check(ts *onion.Toolset) error {
	var unknown []string
	for n := range a.allow {
		if _, ok := ts.Get(n); !ok {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return usageError{fmt.Errorf("-approve names no tool %s: the tools are %s", strings.Join(unknown, ", "), strings.Join(ts.Names(), ", "))}
}

// approve is an onion approver. A question whose context ends is denied.
func (a *approver) approve(ctx context.Context, c onion.Call) (bool, error) {
	if a.allow[c.Name] {
		return true, nil
	}
	if a.lines == nil {
		return false, fmt.Errorf("stdin is not a terminal, so nobody can approve %s: allow it with -approve %s", c.Name, c.Name)
	}
	// The question shows every byte that will run, escaped so that the
	// terminal shows them instead of acting on them, or is not asked.
	args, err := visible.Arguments(c.Arguments)
	if err != nil {
		return false, fmt.Errorf("%w: allow it with -approve %s", err, c.Name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status.ask("The agent wants to run %s (%s) with %s\nAllow? [y/N] ", visible.String(c.Name), visible.String(string(c.Intent)), args)
	line, err := a.lines.next(ctx)
	if err != nil {
		a.status.printf("\n") // no answer ended the line
	}
	a.status.answered()
	if err != nil {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
