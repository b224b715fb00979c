package builtin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/onionkit/onion"
)

func TestMemoryPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "memory.json")
	m, err := NewMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	tools := toolsByName(t, m)
	call(t, tools, "remember", `{"key":"user.name","value":"Ada"}`)
	call(t, tools, "remember", `{"key":"lang","value":"Go"}`)
	call(t, tools, "remember", `{"key":"drop","value":"me"}`)
	call(t, tools, "forget", `{"key":"drop"}`)
	if got := call(t, tools, "recall", `{"key":"user.name"}`); got != "Ada" {
		t.Errorf("recall = %q", got)
	}

	m2, err := NewMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := call(t, toolsByName(t, m2), "memories", `{}`); got != `{"lang":"Go","user.name":"Ada"}` {
		t.Errorf("memories after reload = %s", got)
	}
	assertNoTempFiles(t, filepath.Dir(path))
}

func TestMemoryIntents(t *testing.T) {
	m, _ := NewMemory("")
	want := map[string]onion.Intent{"remember": onion.Write, "recall": onion.Read, "forget": onion.Delete, "memories": onion.Read}
	tools := toolsByName(t, m)
	if len(tools) != len(want) {
		t.Errorf("got %d tools, want %d", len(tools), len(want))
	}
	for name, intent := range want {
		if tool := tools[name]; tool == nil || tool.Intent() != intent {
			t.Errorf("tool %s: missing or intent not %s", name, intent)
		}
	}
}

func TestMemoryInProcess(t *testing.T) {
	m, err := NewMemory("")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Remember("k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Recall("k"); v != "v" || err != nil {
		t.Errorf("Recall = %q, %v", v, err)
	}
	if got := m.Memories(); len(got) != 1 || got["k"] != "v" {
		t.Errorf("Memories = %v", got)
	}
}

func TestMemoryConcurrentRemember(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.json")
	m, err := NewMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := m.Remember(fmt.Sprintf("key%02d", i), fmt.Sprint(i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	m2, err := NewMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	got := m2.Memories()
	if len(got) != n {
		t.Errorf("reloaded %d keys, want %d", len(got), n)
	}
	for i := range n {
		if v := got[fmt.Sprintf("key%02d", i)]; v != fmt.Sprint(i) {
			t.Errorf("key%02d = %q", i, v)
		}
	}
	assertNoTempFiles(t, dir)
}

func TestMemoryCorruptFile(t *testing.T) {
	for _, content := range []string{`{"a":`, `["a"]`, `{"a":1}`, `null`, "\x00\x01"} {
		t.Run(content, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memory.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := NewMemory(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "fix or move") {
				t.Errorf("NewMemory = %v, %v; want an error naming %s", m, err, path)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, []byte(content)) {
				t.Errorf("file changed to %q", after)
			}
		})
	}
}

func TestMemoryMissingOrEmptyFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	for _, path := range []string{filepath.Join(dir, "missing.json"), empty} {
		m, err := NewMemory(path)
		if err != nil || len(m.Memories()) != 0 {
			t.Errorf("NewMemory(%s) = %v, %v; want an empty memory", path, m, err)
		}
	}
}

func TestMemoryBadInput(t *testing.T) {
	m, _ := NewMemory("")
	m.Remember("a", "1")
	m.Remember("b", "2")
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"empty key", func() error { return m.Remember(" ", "v") }, "key is empty"},
		{"long key", func() error { return m.Remember(strings.Repeat("k", maxMemoryKey+1), "v") }, "over the limit of 200"},
		{"bad key", func() error { return m.Remember("\xff", "v") }, "not valid UTF-8"},
		{"empty value", func() error { return m.Remember("k", "") }, "call forget"},
		{"long value", func() error { return m.Remember("k", strings.Repeat("v", maxMemoryValue+1)) }, "over the limit of 4096"},
		{"bad value", func() error { return m.Remember("k", "\xff") }, "not valid UTF-8"},
		{"recall unknown", func() error { _, err := m.Recall("c"); return err }, `nothing is stored under "c": known keys are a, b`},
		{"forget unknown", func() error { return m.Forget("c") }, "known keys are a, b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if len(m.Memories()) != 2 {
		t.Errorf("bad input changed memory: %v", m.Memories())
	}
	empty, _ := NewMemory("")
	if _, err := empty.Recall("x"); err == nil || !strings.Contains(err.Error(), "memory is empty") {
		t.Errorf("recall from empty memory: %v", err)
	}
}

func TestMemoryFull(t *testing.T) {
	m, _ := NewMemory("")
	for i := range maxMemoryEntries {
		if err := m.Remember(fmt.Sprint(i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Remember("one more", "v"); err == nil || !strings.Contains(err.Error(), "forget some first") {
		t.Errorf("err = %v", err)
	}
	if err := m.Remember("0", "replaced"); err != nil {
		t.Errorf("replacing a key in a full memory: %v", err)
	}
}

func TestMemorySaveFailureKeepsState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.json")
	m, _ := NewMemory(path)
	if err := m.Remember("a", "1"); err != nil {
		t.Fatal(err)
	}
	// Make the directory unwritable by putting a file where the save goes.
	m.path = filepath.Join(dir, "memory.json", "nested.json")
	if err := m.Remember("b", "2"); err == nil {
		t.Fatal("Remember succeeded with an unwritable path")
	}
	if err := m.Forget("a"); err == nil {
		t.Fatal("Forget succeeded with an unwritable path")
	}
	if got := m.Memories(); len(got) != 1 || got["a"] != "1" {
		t.Errorf("after failed saves memory = %v, want only a=1", got)
	}
}

// assertNoTempFiles fails if dir holds anything but the memory file.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
