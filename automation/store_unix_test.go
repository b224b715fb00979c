//go:build unix

package automation

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStoreReadBounded: a store whose size its stat does not tell (here a
// pipe) is read no further than the limit: the writer is cut off long
// before it has written all it had.
func TestStoreReadBounded(t *testing.T) {
	lowerMaxStore(t, 1<<10)
	path := filepath.Join(t.TempDir(), "automations.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	const total = 8 << 20
	written := make(chan int, 1)
	go func() {
		n := 0
		defer func() { written <- n }()
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		chunk := []byte(strings.Repeat(" ", 32<<10))
		for n < total {
			m, err := f.Write(chunk)
			n += m
			if err != nil { // the reader closed its end
				return
			}
		}
	}()
	_, _, err := loadStore(path)
	n := <-written
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("loading the pipe: %v; want it refused as over the limit", err)
	}
	if n >= total {
		t.Errorf("the whole %d bytes were read; want the read to stop past %d", n, maxStore)
	}
}
