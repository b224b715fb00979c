package gosource_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/onionkit/onion/internal/gosource"
	"github.com/onionkit/onion/srcdoc"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestParseDirGolden(t *testing.T) {
	pkg, err := gosource.ParseDir("testdata/todo", "todo", false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(pkg, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "todo.golden")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("ParseDir(testdata/todo) differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

func TestParseDirFuncs(t *testing.T) {
	pkg, err := gosource.ParseDir("testdata/todo", "todo", false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		absent bool
		doc    []string
		params []string
	}{
		{name: "Search", doc: []string{"Search finds tasks whose title contains query.", "", "\tIt skips the first offset matches."},
			params: []string{"query", "", "limit", "offset"}},
		{name: "TodoList.Add", doc: []string{"Add adds a task to the list.", "", "onion:intent write", "onion:approve"},
			params: []string{"title", "p"}},
		{name: "TodoList.Get", doc: []string{"Get returns the task with the given id.", "", "onion:intent read"}, params: []string{"id"}},
		{name: "TodoList.Clear", doc: []string{"Clear empties the list.", "", "It cannot be undone."}},
		{name: "unnamed", params: []string{"", ""}},
		{name: "List.Push", doc: []string{"Push appends v."}, params: []string{"v"}},
		{name: "Map", doc: []string{"Map applies f to each element of in."}, params: []string{"in", "f"}},
		{name: "Count", doc: []string{"Count counts the tasks, in /* a comment */ a second file."}, params: []string{"l"}},
		{name: "init", absent: true},
		{name: "generatedFunc", absent: true}, // in a file oniondoc wrote
		{name: "windowsOnly", absent: true},   // GOOS in the file name
		{name: "main", absent: true},          // //go:build ignore, and package main
		{name: "testHelper", absent: true},    // _test.go
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := findFunc(pkg, tt.name)
			if ok == tt.absent {
				t.Fatalf("found = %v, want %v", ok, !tt.absent)
			}
			if !reflect.DeepEqual(f.Doc, tt.doc) {
				t.Errorf("Doc = %q, want %q", f.Doc, tt.doc)
			}
			if !reflect.DeepEqual(f.Params, tt.params) {
				t.Errorf("Params = %q, want %q", f.Params, tt.params)
			}
		})
	}
}

func TestParseDirTypes(t *testing.T) {
	pkg, err := gosource.ParseDir("testdata/todo", "todo", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "github.com/onionkit/onion/internal/gosource/testdata/todo"; pkg.Path != want {
		t.Errorf("Path = %q, want %q", pkg.Path, want)
	}
	tests := []struct {
		name   string
		absent bool
		doc    []string
		fields []srcdoc.Field
		enum   []string
	}{
		{name: "Task", doc: []string{"Task is one thing to do."}, fields: []srcdoc.Field{
			{Name: "Title", Doc: []string{"Title says what to do."}},
			{Name: "Priority", Doc: []string{`Priority defaults to "low".`}},
			{Name: "Start", Doc: []string{"Start and End bound the task."}},
			{Name: "End", Doc: []string{"Start and End bound the task."}},
			{Name: "Tags"},
			{Name: "Mutex"},
			{Name: "Owner", Doc: []string{"who owns the task"}},
		}},
		{name: "Owner", doc: []string{"Owner is a person."}, fields: []srcdoc.Field{{Name: "Name", Doc: []string{"the owner's full name"}}}},
		{name: "TodoList", doc: []string{"TodoList holds tasks.", "", "onion:approve"}, fields: []srcdoc.Field{{Name: "mu"}, {Name: "tasks"}}},
		{name: "Priority", doc: []string{"Priority says how urgent a task is."}, enum: []string{`"low"`, `"medium"`, `"high"`}}, // not the unexported urgent
		{name: "Level", doc: []string{"Level is how much a task matters."}, enum: []string{"1", "2", "3"}},
		{name: "Flag", doc: []string{"Flag is one bit of a task's flags."}, enum: []string{"1", "2", "4", "7"}},
		{name: "Snooze", doc: []string{"Snooze is how long a task sleeps, in hours."}, enum: []string{"1.5", "24"}},
		{name: "ID", doc: []string{"ID identifies a task."}},
		{name: "undocumented", fields: []srcdoc.Field{{Name: "x"}}},
		{name: "List", doc: []string{"List is a generic list."}, fields: []srcdoc.Field{{Name: "items"}}},
		{name: "Alias", absent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, ok := findType(pkg, tt.name)
			if ok == tt.absent {
				t.Fatalf("found = %v, want %v", ok, !tt.absent)
			}
			if !reflect.DeepEqual(typ.Doc, tt.doc) {
				t.Errorf("Doc = %q, want %q", typ.Doc, tt.doc)
			}
			if !reflect.DeepEqual(typ.Fields, tt.fields) {
				t.Errorf("Fields = %q, want %q", typ.Fields, tt.fields)
			}
			if !reflect.DeepEqual(typ.Enum, tt.enum) {
				t.Errorf("Enum = %q, want %q", typ.Enum, tt.enum)
			}
		})
	}
}

func TestParseDirTests(t *testing.T) {
	tests := []struct {
		pkgName  string
		tests    bool
		path     string
		has, not []string
	}{
		{"todo", false, "github.com/onionkit/onion/internal/gosource/testdata/todo", []string{"Search"}, []string{"testHelper", "ExampleSearch"}},
		{"todo", true, "github.com/onionkit/onion/internal/gosource/testdata/todo", []string{"Search", "testHelper"}, []string{"ExampleSearch"}},
		{"todo_test", true, "github.com/onionkit/onion/internal/gosource/testdata/todo_test", []string{"ExampleSearch"}, []string{"Search", "testHelper"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkgName+"/"+map[bool]string{false: "notests", true: "tests"}[tt.tests], func(t *testing.T) {
			pkg, err := gosource.ParseDir("testdata/todo", tt.pkgName, tt.tests)
			if err != nil {
				t.Fatal(err)
			}
			if pkg.Path != tt.path {
				t.Errorf("Path = %q, want %q", pkg.Path, tt.path)
			}
			for _, name := range tt.has {
				if _, ok := findFunc(pkg, name); !ok {
					t.Errorf("%s missing", name)
				}
			}
			for _, name := range tt.not {
				if _, ok := findFunc(pkg, name); ok {
					t.Errorf("%s present", name)
				}
			}
		})
	}
}

func TestParseDirErrors(t *testing.T) {
	broken := t.TempDir()
	writeFile(t, filepath.Join(broken, "ok.go"), "package broken\n\n// Fine is fine.\nfunc Fine() {}\n")
	writeFile(t, filepath.Join(broken, "broken.go"), "package broken\n\n// Broken does not parse.\nfunc Broken( {\n")
	// A file of another package is not read, so its errors do not count.
	writeFile(t, filepath.Join(broken, "other.go"), "package other\n\nfunc {\n")
	tests := []struct {
		dir, pkgName string
		want         string // in the error message
	}{
		{broken, "broken", filepath.Join(broken, "broken.go") + ":4:14: expected ')'"},
		{"testdata/missing", "missing", "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.pkgName, func(t *testing.T) {
			_, err := gosource.ParseDir(tt.dir, tt.pkgName, false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestDocLines reads the doc comment of func F in files gofmt would change:
// gofmt puts a blank line before directives and trims trailing spaces, but
// the reader must not depend on it.
func TestDocLines(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"directive right after text", "// F reads.\n//onion:intent read\n", []string{"F reads.", "onion:intent read"}},
		{"directives kept verbatim", "// F.\n//\n//onion:approve\n//go:generate echo hi\n//line x.go:1\n",
			[]string{"F.", "", "onion:approve", "go:generate echo hi", "line x.go:1"}},
		{"blank lines collapsed and trimmed", "//\n//\n// F.   \n//\n//\n//\n// More.\t\n//\n", []string{"F.", "", "More."}},
		{"no space after slashes", "//F has no space.\n", []string{"F has no space."}},
		{"only the first space goes", "// F:\n//   indented\n", []string{"F:", "  indented"}},
		{"block comment", "/*\nF does things.\n\n\tIndented.\n*/\n", []string{"F does things.", "", "\tIndented."}},
		{"one-line block comment", "/* F is short. */\n", []string{" F is short."}},
		{"blocks and lines", "/* F. */\n// More.\n", []string{" F.", "More."}},
		{"no doc", "", nil},
		{"empty comment", "//\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "p.go"), "package p\n\n"+tt.doc+"func F() {}\n")
			pkg, err := gosource.ParseDir(dir, "p", false)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := findFunc(pkg, "F")
			if !reflect.DeepEqual(f.Doc, tt.want) {
				t.Errorf("Doc = %q, want %q", f.Doc, tt.want)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func findFunc(p srcdoc.Package, name string) (srcdoc.Func, bool) {
	for _, f := range p.Funcs {
		if f.Name == name {
			return f, true
		}
	}
	return srcdoc.Func{}, false
}

func findType(p srcdoc.Package, name string) (srcdoc.Type, bool) {
	for _, t := range p.Types {
		if t.Name == name {
			return t, true
		}
	}
	return srcdoc.Type{}, false
}
