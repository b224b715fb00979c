package onion

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
)

// TerminalApprover returns an approver that shows each call that needs
// approval on out, with its arguments, and reads y or n from in. Anything
// but y or yes, and a read error, means no. A question whose context ends
// is denied; the line being read for it then answers the next question, so
// no input is lost.
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
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "The agent wants to run %s (%s) with %s\nAllow? [y/N] ", c.Name, c.Intent, c.Arguments)
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
