package gosource_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/onionkit/onion/internal/gosource"
	"github.com/onionkit/onion/srcdoc"
)

const localSrc = `package p

// Shared is declared by the package and by a function.
type Shared int

func TestA() {
	// Priority says how urgent a task is.
	type Priority string
	const (
		Low  Priority = "low"
		High Priority = "high"
	)
	type Args struct {
		// P is the priority.
		P Priority
	}
	type Twice int
	const One Twice = 1
	type Shared string
	const S Shared = "s"
	_ = func() {
		type Inner int
		const (
			A Inner = iota + base
			B
		)
	}
}

func TestB() {
	type Twice int
	const One Twice = 2 // another Twice: ambiguous
	type Same bool
}

func TestC() {
	type Same bool
}

const base = 10
`

// TestLocalTypes reads the types a function declares, as tests do, with
// their enums; names that reflect cannot tell apart are left out.
func TestLocalTypes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(localSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg, err := gosource.ParseDir(dir, "p", true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]srcdoc.Type{}
	for _, typ := range pkg.Types {
		got[typ.Name] = typ
	}
	want := map[string]srcdoc.Type{
		"Shared":   {Name: "Shared", Doc: []string{"Shared is declared by the package and by a function."}},
		"Priority": {Name: "Priority", Doc: []string{"Priority says how urgent a task is."}, Enum: []string{`"low"`, `"high"`}},
		"Args":     {Name: "Args", Fields: []srcdoc.Field{{Name: "P", Doc: []string{"P is the priority."}}}},
		"Inner":    {Name: "Inner", Enum: []string{"10", "11"}},
		"Same":     {Name: "Same"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("types:\n%+v\nwant:\n%+v", got, want)
	}
}
