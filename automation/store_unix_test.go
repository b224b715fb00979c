//go:build unix

package automation

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStoreFIFORefused: a store that is a named pipe is refused at once,
// naming the file and what it is, rather than waiting for a writer that
// never comes. The minute's guard only fails the test instead of hanging
// it; it is not a measure of speed.
func TestStoreFIFORefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "automations.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		l, err := NewLocal(path, Options{})
		if err == nil {
			l.Close()
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Error("NewLocal on a named pipe has not returned after a minute")
		// Let it go: a writer that opens and closes the pipe gives the
		// reader an end of file.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		err = <-done
	}
	if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), path) {
		t.Errorf("NewLocal on a named pipe: %v; want it refused as a named pipe, naming the file", err)
	}
}
