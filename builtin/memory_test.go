package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
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

// TestMemoryTwoInstancesShareFile has two Memory values on one file, in
// one process, remember 50 keys each at the same time: every key must be
// kept, and each value sees what the other wrote.
func TestMemoryTwoInstancesShareFile(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	path := filepath.Join(t.TempDir(), "memory.json")
	a, err := NewMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, m := range []struct {
		name string
		mem  *Memory
	}{{"a", a}, {"b", b}} {
		wg.Go(func() {
			for i := range 50 {
				if err := m.mem.Remember(fmt.Sprintf("%s%02d", m.name, i), "v"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got := len(a.Memories()); got != 100 {
		t.Errorf("a sees %d keys, want 100", got)
	}
	if v, err := b.Recall("a07"); err != nil || v != "v" {
		t.Errorf("b.Recall(a07) = %q, %v; want what a wrote", v, err)
	}
	if err := b.Forget("a00"); err != nil {
		t.Errorf("b.Forget(a00), a key a wrote: %v", err)
	}
	c, err := NewMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(c.Memories()); got != 99 {
		t.Errorf("the file holds %d keys, want 99", got)
	}
}

// TestMemoryProcessesShareFile runs four processes (this test binary again)
// that remember 50 keys each in one file at the same time: all 200 must be
// kept.
func TestMemoryProcessesShareFile(t *testing.T) {
	if path := os.Getenv("ONION_MEMORY_HELPER_FILE"); path != "" {
		m, err := NewMemory(path)
		if err != nil {
			t.Fatal(err)
		}
		prefix := os.Getenv("ONION_MEMORY_HELPER_PREFIX")
		for i := range 50 {
			if err := m.Remember(fmt.Sprintf("%s-%02d", prefix, i), "v"); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	path := filepath.Join(t.TempDir(), "memory.json")
	var cmds []*exec.Cmd
	for i := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryProcessesShareFile$", "-test.count=1")
		cmd.Env = append(os.Environ(), "ONION_MEMORY_HELPER_FILE="+path, fmt.Sprintf("ONION_MEMORY_HELPER_PREFIX=p%d", i))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper %d:\n%s", i, out.String())
			}
		})
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %d: %v", i, err)
		}
	}
	m, err := NewMemory(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Memories()); got != 200 {
		t.Errorf("four processes × 50 keys kept %d, want 200", got)
	}
}

// TestMemoryLimitsOnLoad checks that a file holding what the tools would
// refuse to store is refused, naming what is wrong, and left untouched.
func TestMemoryLimitsOnLoad(t *testing.T) {
	many := map[string]string{}
	for i := range maxMemoryEntries + 1 {
		many[fmt.Sprint(i)] = "v"
	}
	manyJSON, _ := json.Marshal(many)
	for name, tt := range map[string]struct{ content, want string }{
		"long key":    {`{"` + strings.Repeat("k", 250) + `":"v"}`, "key is 250 bytes, over the limit of 200"},
		"long value":  {`{"k":"` + strings.Repeat("v", 5000) + `"}`, "value is 5000 bytes, over the limit of 4096"},
		"empty value": {`{"k":""}`, "value is empty"},
		"blank key":   {`{" ":"v"}`, "key is empty"},
		"too many":    {string(manyJSON), "holds 1001 keys, over the limit of 1000"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memory.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := NewMemory(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "fix or move the file") {
				t.Errorf("NewMemory = %v, want an error saying %q", err, tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Error("the file was changed")
			}
		})
	}
}
