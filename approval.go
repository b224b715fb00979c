package onion

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/onionkit/onion/internal/visible"
)

// TerminalApprover returns an approver that shows each call that needs
// approval on out, with the whole of its arguments (control characters,
// escape sequences and invisible or reordering runes written as escapes,
// so that a terminal shows them instead of acting on them), and reads y or
// n from in. Anything but y or yes, and a read error, means no. Arguments
// too long to show (over 32 KiB) are denied with an error, not asked
// about. A question whose context ends is denied; the line being read for
// it then answers the next question, so no input is lost.
func TerminalApprover(in io.Reader, out io.Writer) func(ctx context.Context, c Call) (bool, error) {
	type answer struct {
		line string
		err  error
	}
	var mu sync.Mutex // one question at a time; guards reading
	r := bufio.NewReader(in)
	pending := make(chan answer, 1) // the read in flight, if any, delivers here
	reading := false
	return func(ctx context.Context, c Call) (bool, error) {
		args, err := visible.Arguments(c.Arguments)
		if err != nil {
			return false, fmt.Errorf("%w: approve calls of %s with an approver of your own that decides without showing them", err, c.Name)
		}
		mu.Lock()
		defer mu.Unlock()
		who := "The agent"
		if len(c.Agents) > 0 {
			// A call inside an agent given as a tool: say whose.
			who = "The agent " + visible.String(strings.Join(c.Agents, " → "))
		}
		fmt.Fprintf(out, "%s wants to run %s (%s) with %s\nAllow? [y/N] ", who, visible.String(c.Name), visible.String(string(c.Intent)), args)
		if !reading {
			reading = true
			go func() {
				line, err := r.ReadString('\n')
				pending <- answer{line, err}
			}()
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case a := <-pending:
			reading = false
			if a.err != nil && a.line == "" {
				return false, fmt.Errorf("read approval: %w", a.err)
			}
			switch strings.ToLower(strings.TrimSpace(a.line)) {
			case "y", "yes":
				return true, nil
			}
			return false, nil
		}
	}
}
