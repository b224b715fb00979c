package main

import (
	"bytes"
	"encoding/json"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/onionkit/onion/internal/gosource"
	"github.com/onionkit/onion/srcdoc"
)

const demoSrc = `// Package demo is a small tool package.
package demo

import "sync"

// Priority says how urgent a task is.
type Priority string

const (
	Low  Priority = "low"
	High Priority = "high"
)

// Level is a numeric level.
type Level int

const (
	Debug Level = iota
	Info
)

// Task is a thing to do.
type Task struct {
	// Title says what to do: "quoted", ` + "`ticked`" + `, café.
	Title string
	Due   string // Due is a date, like 2026-12-01.
	sync.Mutex
}

// TodoList holds tasks.
type TodoList struct{ tasks []Task }

// Add adds a task.
//
//onion:intent write
func (l *TodoList) Add(title string, p Priority) error { return nil }

// Get returns a task.
//onion:intent read
func (l TodoList) Get(i int) Task { return Task{} }

/*
Search finds tasks.
	Indented "line" with a tab.
*/
func Search(query string, _ int, limit, offset int) []Task { return nil }

func helper(int, string) {}

// Map maps.
func Map[T, U any](in []T, f func(T) U) []U { return nil }
`

const demoTestSrc = `package demo

// inTest is in a _test.go file: not generated.
func inTest() {}
`

const checkSrc = `// Command check prints the facts registered for the demo package and for
// itself.
package main

import (
	"encoding/json"
	"os"

	_ "example.com/demo/demo"
	"github.com/onionkit/onion/srcdoc"
)

// report writes the registered facts to w as JSON.
func report(paths ...string) error {
	out := map[string]srcdoc.Package{}
	for _, p := range paths {
		out[p], _ = srcdoc.Registered(p)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func main() {
	if err := report("example.com/demo/demo", "main"); err != nil {
		panic(err)
	}
}
`

// TestGenerate generates facts for a library package and a main package in
// a module of their own, builds it, and compares what the built program has
// registered with what ParseDir reads from the source.
func TestGenerate(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	onion, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	writeFiles(t, mod, map[string]string{
		"go.mod": "module example.com/demo\n\ngo 1.26\n\nrequire github.com/onionkit/onion v0.0.0\n\n" +
			"replace github.com/onionkit/onion => " + onion + "\n",
		"demo/demo.go":      demoSrc,
		"demo/demo_test.go": demoTestSrc,
		"check/main.go":     checkSrc,
	})
	t.Setenv("GOPROXY", "off") // everything needed is local
	t.Setenv("GOFLAGS", "-mod=mod")

	for _, dir := range []string{"demo", "check"} {
		dir := filepath.Join(mod, dir)
		if err := generate(dir, "oniondoc_gen.go"); err != nil {
			t.Fatalf("generate %s: %v", dir, err)
		}
		out := filepath.Join(dir, "oniondoc_gen.go")
		src, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(src, []byte(gosource.GeneratedHeader+"\n")) {
			t.Errorf("%s does not start with the generated-code header:\n%s", out, src)
		}
		if formatted, err := format.Source(src); err != nil || !bytes.Equal(formatted, src) {
			t.Errorf("%s is not gofmt'ed (%v):\n%s", out, err, src)
		}
		if bytes.Contains(src, []byte("inTest")) {
			t.Errorf("%s holds a func from a _test.go file", out)
		}
		// Running again, with the generated file present, writes the same.
		if err := generate(dir, "oniondoc_gen.go"); err != nil {
			t.Fatal(err)
		}
		if again, _ := os.ReadFile(out); !bytes.Equal(again, src) {
			t.Errorf("second run wrote a different %s:\n%s", out, again)
		}
	}

	goCmd(t, mod, "vet", "./...")
	var got map[string]srcdoc.Package
	if err := json.Unmarshal(goCmd(t, mod, "run", "./check"), &got); err != nil {
		t.Fatal(err)
	}
	for path, dir := range map[string]string{"example.com/demo/demo": "demo", "main": "check"} {
		name := filepath.Base(dir)
		if path == "main" {
			name = "main"
		}
		want, err := gosource.ParseDir(filepath.Join(mod, dir), name, false)
		if err != nil {
			t.Fatal(err)
		}
		want.Path = path
		if !reflect.DeepEqual(got[path], want) {
			t.Errorf("registered %s:\n%+v\nParseDir:\n%+v", path, got[path], want)
		}
	}
	if demo := got["example.com/demo/demo"]; len(demo.Funcs) != 5 || len(demo.Types) != 4 {
		t.Errorf("registered %d funcs and %d types for demo, want 5 and 4", len(demo.Funcs), len(demo.Types))
	}
}

func TestGenerateErrors(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	mod := t.TempDir()
	writeFiles(t, mod, map[string]string{
		"go.mod":          "module example.com/bad\n\ngo 1.26\n",
		"broken/b.go":     "package broken\n\nfunc Broken( {\n",
		"empty/README.md": "no Go here\n",
	})
	t.Setenv("GOPROXY", "off")
	tests := []struct{ dir, want string }{
		{"broken", filepath.Join("broken", "b.go") + ":3:"},
		{"empty", "no Go"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			err := generate(filepath.Join(mod, tt.dir), "oniondoc_gen.go")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(mod, tt.dir, "oniondoc_gen.go")); err == nil {
				t.Error("an output file was written")
			}
		})
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func goCmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}
