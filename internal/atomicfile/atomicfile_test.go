package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteReplacesWhole: the file holds the new content with the mode
// asked for, and no temporary file is left beside it.
func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v; want new", got, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want the one", len(entries))
	}
}

// TestWriteFailureKeepsTheOld: a write that cannot rename (the path is a
// directory) leaves the old content and no temporary file, and says which
// path failed.
func TestWriteFailureKeepsTheOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(path, []byte("new"), 0o600)
	if err == nil {
		t.Fatal("renaming over a directory passed")
	}
	if fi, serr := os.Stat(path); serr != nil || !fi.IsDir() {
		t.Errorf("the directory is gone: %v", serr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries left, want the directory alone", len(entries))
	}
	if err := Write(filepath.Join(dir, "missing", "f"), nil, 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing directory: err = %v, want fs.ErrNotExist", err)
	}
}
