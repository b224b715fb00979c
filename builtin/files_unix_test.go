//go:build unix

package builtin

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestFilesReadNamedPipe checks that read_file refuses a named pipe inside
// the root at once instead of blocking forever on it (a goroutine and a
// file descriptor per call), and that grep passes over it.
func TestFilesReadNamedPipe(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f, dir := newTestFiles(t, map[string]string{"notes.txt": "find me"})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		text, err := f.ReadFile("pipe")
		done <- result{text, err}
	}()
	select {
	case r := <-done:
		if r.err == nil || !strings.Contains(r.err.Error(), "is a named pipe, not a regular file") {
			t.Errorf("ReadFile(pipe) = %q, %v; want a refusal naming the pipe", r.text, r.err)
		}
	case <-time.After(time.Minute): // a watchdog, not a measurement: the fixed call returns at once
		t.Fatal("ReadFile of a named pipe did not return")
	}
	if got, err := f.Grep(t.Context(), "find", ""); err != nil || got != "notes.txt:1: find me" {
		t.Errorf("Grep next to a pipe = %q, %v", got, err)
	}
}
