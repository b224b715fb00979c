//go:build unix

package oniontest_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

// TestPlaybackRefusesFIFO: a named pipe where the recording should be,
// which no one writes to, stops the test at once instead of blocking it
// for good; Record over one records all the same.
func TestPlaybackRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	ft := &fatalT{fakeT: fakeT{TB: t}}
	done := make(chan struct{})
	go func() { // Fatalf ends the goroutine, as it ends a test's
		defer close(done)
		oniontest.Playback(ft, path)
	}()
	<-done
	if got := ft.failures(); !strings.Contains(got, "oniontest: Playback: ") || !strings.Contains(got, "regular") {
		t.Errorf("failures: %q", got)
	}

	rec := oniontest.Record(t, "http://127.0.0.1:1/v1", path)
	rec.Close()
	oniontest.Playback(t, path) // the file Record wrote over the pipe, with no exchange
}
