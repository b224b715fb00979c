package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/visible"
)

// status writes what happens during a run to stderr: a line as each tool
// call starts and finishes, and a spinner while the model thinks when
// stderr is a terminal (plain lines only, otherwise, so that a log reads
// well).
type status struct {
	w   io.Writer
	tty bool

	mu       sync.Mutex    // guards writes to w and the fields below
	spinning bool          // a spinner frame may be on the line
	quit     chan struct{} // closed to end the spinner's goroutine
	asking   bool          // a question waits for its answer on the line
	held     []string      // the lines that came meanwhile, to print after it
	wg       sync.WaitGroup
}

var spinnerFrames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// spin shows the spinner with label until the next line or stop.
func (s *status) spin(label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tty || s.spinning || s.asking {
		return
	}
	s.spinning = true
	s.quit = make(chan struct{})
	s.wg.Add(1)
	go s.spinLoop(label, s.quit)
}

func (s *status) spinLoop(label string, quit chan struct{}) {
	defer s.wg.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		s.mu.Lock()
		select {
		case <-quit:
			s.mu.Unlock()
			return
		default:
		}
		fmt.Fprintf(s.w, "\r%c %s", spinnerFrames[i%len(spinnerFrames)], label)
		s.mu.Unlock()
		select {
		case <-quit:
			return
		case <-tick.C:
		}
	}
}

// stopLocked takes the spinner off the line; s.mu is held.
func (s *status) stopLocked() {
	if !s.spinning {
		return
	}
	s.spinning = false
	close(s.quit)
	fmt.Fprint(s.w, "\r\033[K")
}

// stop takes the spinner off the line.
func (s *status) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

// close stops the spinner and waits for its goroutine.
func (s *status) close() {
	s.stop()
	s.wg.Wait()
}

// printf writes a line (or a prompt) in place of the spinner, or after
// the answer when a question is being asked.
func (s *status) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asking {
		s.held = append(s.held, fmt.Sprintf(format, args...))
		return
	}
	s.stopLocked()
	fmt.Fprintf(s.w, format, args...)
}

// ask writes a question, and holds back every other line until answered
// is called, so that they do not break into the line being typed.
func (s *status) ask(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
	fmt.Fprintf(s.w, format, args...)
	s.asking = true
}

// answered writes the lines held back while the question was asked.
func (s *status) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asking = false
	for _, line := range s.held {
		fmt.Fprint(s.w, line)
	}
	s.held = nil
}

// started says that a tool call starts: its name and a short form of its
// arguments.
func (s *status) started(c *onion.ToolCall) {
	s.printf("→ %s %s\n", c.Name, short(compactJSON(c.Arguments), 80))
}

// finished says how a tool call ended and how long it took: the tool's
// own time, without the time the approval took, which is said apart.
func (s *status) finished(c *onion.ToolCall) {
	took := c.Duration - c.ApprovalWait
	if c.Outcome == onion.Denied {
		took = c.Duration // it never ran: the wait is all there was
	}
	line := fmt.Sprintf("← %s %s in %s", c.Name, c.Outcome, roundDuration(took))
	if c.ApprovalWait > 0 && c.Outcome != onion.Denied {
		line += fmt.Sprintf(" (after %s waiting for approval)", roundDuration(c.ApprovalWait))
	}
	if c.Error != "" {
		line += ": " + short(c.Error, 160)
	}
	s.printf("%s\n", line)
}

// compactJSON is the arguments without the model's spacing, or as they
// came when they are not JSON.
func compactJSON(args string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(args)) != nil {
		return args
	}
	return b.String()
}

// short is s on one line, cut to at most n runes, with what a terminal
// would act on instead of showing (s comes from a model, a tool or a
// server) escaped after the cut. It is for status lines: a question shows
// the whole (visible.Arguments).
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return visible.String(s)
}

// roundDuration keeps about three significant digits of d.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < 10*time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d < 100*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d < time.Second:
		return d.Round(time.Millisecond)
	default:
		return d.Round(10 * time.Millisecond)
	}
}
