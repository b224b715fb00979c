package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// lineReader reads the lines typed at the terminal for whoever asks next:
// chat's prompts and the approval questions share stdin through it, so
// that neither steals a line meant for the other.
type lineReader struct {
	once  sync.Once
	in    io.Reader
	lines chan string // closed after the last line
}

func newLineReader(in io.Reader) *lineReader {
	return &lineReader{in: in, lines: make(chan string)}
}

// next returns the next line without its newline, io.EOF after the last,
// or ctx's error if ctx ends first; a line read meanwhile goes to the next
// caller. The goroutine reading stdin lives as long as the process: a read
// of a terminal cannot be interrupted.
func (l *lineReader) next(ctx context.Context) (string, error) {
	l.once.Do(func() {
		go func() {
			defer close(l.lines)
			r := bufio.NewReader(l.in)
			for {
				line, err := r.ReadString('\n')
				if line != "" {
					l.lines <- strings.TrimRight(line, "\r\n")
				}
				if err != nil {
					return
				}
			}
		}()
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case line, ok := <-l.lines:
		if !ok {
			return "", io.EOF
		}
		return line, nil
	}
}
