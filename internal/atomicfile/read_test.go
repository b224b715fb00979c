package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/onionkit/onion/internal/atomicfile"
)

func TestReadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 101), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "named pipe"},
		{"/dev/zero", "device"},
		{dir, "directory"},
		{big, "over the limit of 100"},
	} {
		_, err := atomicfile.ReadFile(c.path, 100)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("ReadFile(%s) = %v, want an error naming the path and %q", c.path, err, c.want)
		}
	}
	if b, err := atomicfile.ReadFile(ok, 100); err != nil || string(b) != "hello" {
		t.Errorf("ReadFile(ok) = %q, %v", b, err)
	}
}
