package main

import (
	"bytes"
	"encoding/json"
	"flag"
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

import (
	"context"
	"sync"
	"time"
)

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

// Slot is a time booked.
type Slot struct {
	At    time.Time
	Hours int
}

// Reserve books a slot.
func Reserve(ctx context.Context, s Slot) (Slot, error) { s.Hours++; return s, ctx.Err() }

// Plan plans every so often.
func Plan(at time.Time, every time.Duration) error { return nil }

// Map maps.
func Map[T, U any](in []T, f func(T) U) []U { return nil }
`

const demoTestSrc = `package demo

// inTest is in a _test.go file: not generated.
func inTest() {}
`

const checkSrc = `// Command check prints the facts registered for the demo package and for
// itself, and what the demo package's generated Calls return.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"example.com/demo/demo"
	"github.com/onionkit/onion/srcdoc"
)

// report writes the registered facts to w as JSON, with what each of
// demo's Calls returns for zero arguments.
func report(paths ...string) error {
	out := struct {
		Facts map[string]srcdoc.Package
		Calls map[string]string
	}{map[string]srcdoc.Package{}, map[string]string{}}
	for _, p := range paths {
		out.Facts[p], _ = srcdoc.Registered(p)
	}
	values := map[string]any{"Search": demo.Search, "Reserve": demo.Reserve, "Plan": demo.Plan,
		"TodoList.Add": &demo.TodoList{}, "TodoList.Get": demo.TodoList{}.Get}
	for _, f := range out.Facts["example.com/demo/demo"].Funcs {
		if f.Call == nil {
			continue
		}
		c := f.Call(values[f.Name])
		if c == nil {
			out.Calls[f.Name] = "no call"
			continue
		}
		res, err := c.Invoke(context.Background(), reflect.New(c.Args()).Interface())
		out.Calls[f.Name] = fmt.Sprintf("%v %v %v", c.Args(), res, err)
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
		if filepath.Base(dir) == "demo" {
			golden(t, "testdata/demo_gen.golden", src)
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
	var report struct {
		Facts map[string]srcdoc.Package
		Calls map[string]string
	}
	if err := json.Unmarshal(goCmd(t, mod, "run", "./check"), &report); err != nil {
		t.Fatal(err)
	}
	got := report.Facts
	// The exported funcs and methods of a tool's shape have a Call; the
	// others, a generic one, and those of the main package (whose funcs
	// take nothing a Call could hold), do not.
	wantCalls := map[string]string{
		"Search":       "struct { P0 string; P1 int; P2 int; P3 int } [] <nil>",
		"Reserve":      "demo.Slot {0001-01-01 00:00:00 +0000 UTC 1} <nil>",
		"Plan":         "struct { P0 time.Time; P1 time.Duration } <nil> <nil>",
		"TodoList.Add": "struct { P0 string; P1 demo.Priority } <nil> <nil>",
		"TodoList.Get": "struct { P0 int } {  {{} {0 0}}} <nil>",
	}
	if !reflect.DeepEqual(report.Calls, wantCalls) {
		t.Errorf("the generated Calls return\n%q\nwant\n%q", report.Calls, wantCalls)
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
	if demo := got["example.com/demo/demo"]; len(demo.Funcs) != 7 || len(demo.Types) != 5 {
		t.Errorf("registered %d funcs and %d types for demo, want 7 and 5", len(demo.Funcs), len(demo.Types))
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

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with the golden file, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("generated file differs from %s (go test -update rewrites it):\n%s", path, got)
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
