package gosource_test

import (
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion/internal/gosource"
	"github.com/onionkit/onion/srcdoc"
)

// The funcs and types below are what the lookups in this file find.

// searchNotes finds notes whose text contains query.
//
//onion:intent read
func searchNotes(query string, limit int) []string { return nil }

func unnamedParams(string, int) {}

// groupedParams has grouped parameters.
func groupedParams(a, b int, _ string, c ...bool) {}

func outer() func() { return func() {} }

// Notes is a list of notes, guarded by its embedded mutex.
type Notes struct {
	sync.Mutex
	// Items are the notes, oldest first.
	Items []string
	limit int // the most notes kept
}

// Add appends a note.
//
//onion:intent write
//onion:approve
func (n *Notes) Add(text string, pinned bool) int {
	if n.limit > 0 && len(n.Items) >= n.limit {
		n.Items = n.Items[1:]
	}
	n.Items = append(n.Items, text)
	return len(n.Items)
}

// Tag labels a note.
type Tag struct{ name string }

// Title returns the tag's name in title case.
func (t Tag) Title(lang string) string { return t.name }

// Color is a note's color.
type Color string

// The colors a note can have.
const (
	Yellow Color = "yellow"
	Blue   Color = "blue"
)

// registeredTool's doc here wins over the stale facts registered in
// TestSourceWinsOverRegistry.
func registeredTool(a int) {}

// registeredType's doc here wins over the stale facts registered in
// TestSourceWinsOverRegistry.
type registeredType int

const thisPkg = "github.com/onionkit/onion/internal/gosource_test"

var title = srcdoc.Func{Name: "Tag.Title", Doc: []string{"Title returns the tag's name in title case."}, Params: []string{"lang"}}

func TestForFunc(t *testing.T) {
	notes := &Notes{}
	tests := []struct {
		name   string
		fn     any
		want   srcdoc.Func
		absent bool
	}{
		{name: "func with directives", fn: searchNotes, want: srcdoc.Func{Name: "searchNotes",
			Doc:    []string{"searchNotes finds notes whose text contains query.", "", "onion:intent read"},
			Params: []string{"query", "limit"}}},
		{name: "unnamed params", fn: unnamedParams, want: srcdoc.Func{Name: "unnamedParams", Params: []string{"", ""}}},
		{name: "grouped params", fn: groupedParams, want: srcdoc.Func{Name: "groupedParams",
			Doc: []string{"groupedParams has grouped parameters."}, Params: []string{"a", "b", "", "c"}}},
		{name: "bound method value, pointer receiver", fn: notes.Add, want: srcdoc.Func{Name: "Notes.Add",
			Doc:    []string{"Add appends a note.", "", "onion:intent write", "onion:approve"},
			Params: []string{"text", "pinned"}}},
		{name: "bound method value, value receiver", fn: Tag{}.Title, want: title},
		{name: "method expression", fn: (*Notes).Add, want: srcdoc.Func{Name: "Notes.Add",
			Doc:    []string{"Add appends a note.", "", "onion:intent write", "onion:approve"},
			Params: []string{"text", "pinned"}}},
		{name: "method expression, value receiver", fn: Tag.Title, want: title},
		{name: "anonymous func", fn: outer(), absent: true},
		{name: "func literal", fn: func(x int) {}, absent: true},
		{name: "nil func", fn: (func())(nil), absent: true},
		{name: "not a func", fn: 42, absent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, pkgPath, found, err := gosource.ForFunc(reflect.ValueOf(tt.fn))
			if err != nil {
				t.Fatal(err)
			}
			if found == tt.absent {
				t.Fatalf("found = %v, want %v (%+v)", found, !tt.absent, f)
			}
			if found && pkgPath != thisPkg {
				t.Errorf("pkgPath = %q, want %q", pkgPath, thisPkg)
			}
			if !reflect.DeepEqual(f, tt.want) {
				t.Errorf("Func = %#v\nwant %#v", f, tt.want)
			}
		})
	}
}

func TestForMethod(t *testing.T) {
	add := srcdoc.Func{Name: "Notes.Add", Doc: []string{"Add appends a note.", "", "onion:intent write", "onion:approve"},
		Params: []string{"text", "pinned"}}
	tests := []struct {
		typ             reflect.Type
		method          string
		declared, found bool
		want            srcdoc.Func
	}{
		{reflect.TypeFor[*Notes](), "Add", true, true, add},
		{reflect.TypeFor[*Tag](), "Title", true, true, title}, // value receiver, via the pointer
		{reflect.TypeFor[Tag](), "Title", true, true, title},
		{reflect.TypeFor[*Notes](), "Lock", false, false, srcdoc.Func{}}, // promoted from sync.Mutex
		{reflect.TypeFor[*Notes](), "Unlock", false, false, srcdoc.Func{}},
		{reflect.TypeFor[*Notes](), "TryLock", false, false, srcdoc.Func{}},
		{reflect.TypeFor[*Notes](), "Missing", false, false, srcdoc.Func{}},
		{reflect.TypeFor[Notes](), "Add", false, false, srcdoc.Func{}}, // not in a value's method set
		{reflect.TypeFor[*sync.Mutex](), "Lock", true, true, srcdoc.Func{}},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String()+"."+tt.method, func(t *testing.T) {
			f, declared, found, err := gosource.ForMethod(tt.typ, tt.method)
			if err != nil {
				t.Fatal(err)
			}
			if declared != tt.declared || found != tt.found {
				t.Fatalf("declared, found = %v, %v; want %v, %v", declared, found, tt.declared, tt.found)
			}
			if tt.want.Name != "" && !reflect.DeepEqual(f, tt.want) {
				t.Errorf("Func = %#v\nwant %#v", f, tt.want)
			}
			if tt.want.Name == "" && found && f.Name != "Mutex.Lock" {
				t.Errorf("Func.Name = %q, want Mutex.Lock", f.Name)
			}
		})
	}
}

func TestForType(t *testing.T) {
	hint := gosource.FileOf(reflect.ValueOf(searchNotes))
	tests := []struct {
		name string
		typ  reflect.Type
		hint string
		want srcdoc.Type
	}{
		{"struct with embedded field", reflect.TypeFor[Notes](), hint, srcdoc.Type{Name: "Notes",
			Doc: []string{"Notes is a list of notes, guarded by its embedded mutex."},
			Fields: []srcdoc.Field{{Name: "Mutex"}, {Name: "Items", Doc: []string{"Items are the notes, oldest first."}},
				{Name: "limit", Doc: []string{"the most notes kept"}}}}},
		{"pointer", reflect.TypeFor[*Notes](), hint, srcdoc.Type{Name: "Notes",
			Doc: []string{"Notes is a list of notes, guarded by its embedded mutex."},
			Fields: []srcdoc.Field{{Name: "Mutex"}, {Name: "Items", Doc: []string{"Items are the notes, oldest first."}},
				{Name: "limit", Doc: []string{"the most notes kept"}}}}},
		{"enum", reflect.TypeFor[Color](), hint, srcdoc.Type{Name: "Color", Doc: []string{"Color is a note's color."},
			Enum: []string{`"yellow"`, `"blue"`}}},
		{"no hint", reflect.TypeFor[Color](), "", srcdoc.Type{Name: "Color", Doc: []string{"Color is a note's color."},
			Enum: []string{`"yellow"`, `"blue"`}}},
		{"located through its methods", reflect.TypeFor[time.Month](), "", srcdoc.Type{Name: "Month",
			Doc:  []string{"A Month specifies a month of the year (January = 1, ...)."},
			Enum: []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"}}},
		{"internal package type", reflect.TypeFor[srcdoc.Field](), hint, srcdoc.Type{Name: "Field",
			Doc: []string{"Field is what the source says about a struct field. An embedded field is",
				`named after its type ("Mutex" for an embedded sync.Mutex).`},
			Fields: []srcdoc.Field{{Name: "Name"}, {Name: "Doc", Doc: []string{"the field's doc comment, or its line comment if it has none"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := gosource.ForType(tt.typ, tt.hint)
			if !ok {
				t.Fatal("not found")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Type = %#v\nwant %#v", got, tt.want)
			}
		})
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[int](), reflect.TypeFor[[]Notes](), reflect.TypeFor[struct{ X int }]()} {
		if got, ok := gosource.ForType(typ, hint); ok {
			t.Errorf("ForType(%v) = %+v, want not found", typ, got)
		}
	}
}

func TestFileOf(t *testing.T) {
	want, err := filepath.Abs("lookup_test.go")
	if err != nil {
		t.Fatal(err)
	}
	notes := &Notes{}
	for _, fn := range []any{searchNotes, notes.Add, (*Notes).Add} {
		if got := gosource.FileOf(reflect.ValueOf(fn)); got != want {
			t.Errorf("FileOf(%T) = %q, want %q", fn, got, want)
		}
	}
	if got := gosource.FileOf(reflect.ValueOf(func() {})); got != want {
		t.Errorf("FileOf(func literal) = %q, want %q", got, want)
	}
	if got := gosource.FileOf(reflect.Value{}); got != "" {
		t.Errorf("FileOf(invalid) = %q, want \"\"", got)
	}
}

// TestSourceWinsOverRegistry registers stale facts for a func and a type
// whose source is at hand: the source is what counts.
func TestSourceWinsOverRegistry(t *testing.T) {
	srcdoc.Register(srcdoc.Package{
		Path:  thisPkg,
		Funcs: []srcdoc.Func{{Name: "registeredTool", Doc: []string{"stale"}, Params: []string{"x"}}},
		Types: []srcdoc.Type{{Name: "registeredType", Doc: []string{"stale"}, Enum: []string{"1"}}},
	})
	f, _, found, err := gosource.ForFunc(reflect.ValueOf(registeredTool))
	if err != nil || !found {
		t.Fatalf("ForFunc: found = %v, err = %v", found, err)
	}
	want := srcdoc.Func{Name: "registeredTool", Doc: []string{"registeredTool's doc here wins over the stale facts registered in", "TestSourceWinsOverRegistry."}, Params: []string{"a"}}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("ForFunc = %#v, want %#v", f, want)
	}
	typ, ok := gosource.ForType(reflect.TypeFor[registeredType](), "")
	if !ok || len(typ.Enum) != 0 || !reflect.DeepEqual(typ.Doc, []string{"registeredType's doc here wins over the stale facts registered in", "TestSourceWinsOverRegistry."}) {
		t.Errorf("ForType = %#v, %v; want the source's facts", typ, ok)
	}
}

func BenchmarkForFunc(b *testing.B) {
	fn := reflect.ValueOf(searchNotes)
	if _, _, found, err := gosource.ForFunc(fn); !found || err != nil {
		b.Fatalf("found = %v, err = %v", found, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		gosource.ForFunc(fn)
	}
}

func BenchmarkForFuncMethodValue(b *testing.B) {
	fn := reflect.ValueOf((&Notes{}).Add)
	if _, _, found, err := gosource.ForFunc(fn); !found || err != nil {
		b.Fatalf("found = %v, err = %v", found, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		gosource.ForFunc(fn)
	}
}
