package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestMain runs oniondoc's main instead of the tests when asked to, so that
// a test can see its exit status without building it.
func TestMain(m *testing.M) {
	if os.Getenv("ONIONDOC_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCheck makes the generated file stale in each way a package changes
// and asks oniondoc -check about it.
func TestCheck(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	mod := t.TempDir()
	writeFiles(t, mod, map[string]string{
		"go.mod":       "module example.com/demo\n\ngo 1.26\n",
		"demo/demo.go": demoSrc,
	})
	t.Setenv("GOPROXY", "off")
	dir := filepath.Join(mod, "demo")
	if err := generate(dir, "oniondoc_gen.go"); err != nil {
		t.Fatal(err)
	}
	if diffs, err := check(dir, "oniondoc_gen.go"); err != nil || len(diffs) != 0 {
		t.Fatalf("fresh file: diffs %q, err %v", diffs, err)
	}
	if code, out := runMain(t, dir); code != 0 || out != "" {
		t.Errorf("oniondoc -check on a fresh file: exit %d, output %q", code, out)
	}

	src := strings.Replace(demoSrc, "// Add adds a task.", "// Add adds a task to the list.", 1)
	src = strings.Replace(src, "func helper(int, string) {}", "func Added() {}", 1)
	src = strings.Replace(src, "// Level is a numeric level.\ntype Level int\n", "", 1)
	src = strings.Replace(src, "Debug Level = iota", "Debug = iota", 1)
	// The same names, another type: only the Call tells.
	src = strings.Replace(src, "limit, offset int) []Task", "limit, offset int64) []Task", 1)
	// Another directory: ParseDir caches a directory for the life of the
	// process, which a run of oniondoc is.
	gen, err := os.ReadFile(filepath.Join(dir, "oniondoc_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	mod = t.TempDir()
	writeFiles(t, mod, map[string]string{
		"go.mod":               "module example.com/demo\n\ngo 1.26\n",
		"demo/demo.go":         src,
		"demo/oniondoc_gen.go": string(gen),
	})
	dir = filepath.Join(mod, "demo")
	diffs, err := check(dir, "oniondoc_gen.go")
	want := []string{"changed: func TodoList.Add", "changed: func Search", "added: func Added", "removed: type Level", "removed: func helper"}
	if err != nil || !reflect.DeepEqual(sorted(diffs), sorted(want)) {
		t.Errorf("stale file: diffs %q, err %v; want %q", diffs, err, want)
	}
	code, out := runMain(t, dir)
	if code == 0 || !strings.Contains(out, "oniondoc_gen.go is stale") || !strings.Contains(out, "changed: func TodoList.Add") {
		t.Errorf("oniondoc -check on a stale file: exit %d, output:\n%s", code, out)
	}

	// A file formatted otherwise but holding the same facts is not stale.
	if err := generate(dir, "oniondoc_gen.go"); err != nil {
		t.Fatal(err)
	}
	genPath := filepath.Join(dir, "oniondoc_gen.go")
	b, _ := os.ReadFile(genPath)
	if !bytes.Contains(b, []byte("`\"low\"`")) {
		t.Fatalf("no `\"low\"` to rewrite in:\n%s", b)
	}
	b = bytes.ReplaceAll(b, []byte("`\"low\"`"), []byte(`"\"low\""`))
	if err := os.WriteFile(genPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if diffs, err := check(dir, "oniondoc_gen.go"); err != nil || len(diffs) != 0 {
		t.Errorf("reformatted file: diffs %q, err %v", diffs, err)
	}
	if err := os.Remove(genPath); err != nil {
		t.Fatal(err)
	}
	if diffs, _ := check(dir, "oniondoc_gen.go"); len(diffs) != 1 || !strings.HasPrefix(diffs[0], "missing: ") {
		t.Errorf("missing file: diffs %q", diffs)
	}
}

// runMain runs oniondoc -check -dir dir in a child process and returns its
// exit code and output.
func runMain(t *testing.T, dir string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-check", "-dir", dir)
	cmd.Env = append(os.Environ(), "ONIONDOC_RUN_MAIN=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
