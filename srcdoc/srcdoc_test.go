package srcdoc_test

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/onionkit/onion/srcdoc"
)

// runs makes each run's paths fresh: the registry lives as long as the
// process, across -count repetitions.
var runs atomic.Int64

func TestRegisterMerges(t *testing.T) {
	path := fmt.Sprintf("example.com/merge%d", runs.Add(1))
	steps := []struct {
		register srcdoc.Package
		want     srcdoc.Package
	}{
		{
			register: srcdoc.Package{Path: path,
				Funcs: []srcdoc.Func{{Name: "A", Doc: []string{"a"}}, {Name: "B"}},
				Types: []srcdoc.Type{{Name: "T", Enum: []string{"1"}}}},
			want: srcdoc.Package{Path: path,
				Funcs: []srcdoc.Func{{Name: "A", Doc: []string{"a"}}, {Name: "B"}},
				Types: []srcdoc.Type{{Name: "T", Enum: []string{"1"}}}},
		},
		{
			register: srcdoc.Package{Path: path,
				Funcs: []srcdoc.Func{{Name: "C"}, {Name: "A", Doc: []string{"new a"}}}},
			want: srcdoc.Package{Path: path,
				Funcs: []srcdoc.Func{{Name: "A", Doc: []string{"new a"}}, {Name: "B"}, {Name: "C"}},
				Types: []srcdoc.Type{{Name: "T", Enum: []string{"1"}}}},
		},
		{
			register: srcdoc.Package{Path: path, Types: []srcdoc.Type{{Name: "U"}, {Name: "T", Enum: []string{"2"}}}},
			want: srcdoc.Package{Path: path,
				Funcs: []srcdoc.Func{{Name: "A", Doc: []string{"new a"}}, {Name: "B"}, {Name: "C"}},
				Types: []srcdoc.Type{{Name: "T", Enum: []string{"2"}}, {Name: "U"}}},
		},
	}
	var earlier []srcdoc.Package
	for i, s := range steps {
		srcdoc.Register(s.register)
		got, ok := srcdoc.Registered(path)
		if !ok || !reflect.DeepEqual(got, s.want) {
			t.Fatalf("step %d: Registered = %+v, %v\nwant %+v", i, got, ok, s.want)
		}
		earlier = append(earlier, got)
	}
	// A later registration leaves what was handed out before unchanged.
	for i, p := range earlier {
		if !reflect.DeepEqual(p, steps[i].want) {
			t.Errorf("step %d's result changed to %+v", i, p)
		}
	}
	if _, ok := srcdoc.Registered("example.com/none"); ok {
		t.Error("Registered(unregistered path) reported ok")
	}
}

func TestRegisterCopies(t *testing.T) {
	funcs := []srcdoc.Func{{Name: "A"}}
	srcdoc.Register(srcdoc.Package{Path: "example.com/copies", Funcs: funcs})
	funcs[0].Name = "changed"
	if p, _ := srcdoc.Registered("example.com/copies"); p.Funcs[0].Name != "A" {
		t.Errorf("Register kept the caller's slice: Funcs[0].Name = %q", p.Funcs[0].Name)
	}
}

func TestRegisterConcurrent(t *testing.T) {
	const path = "example.com/concurrent"
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			srcdoc.Register(srcdoc.Package{Path: path, Funcs: []srcdoc.Func{{Name: fmt.Sprint("F", i)}}})
			srcdoc.Registered(path)
		})
	}
	wg.Wait()
	if p, _ := srcdoc.Registered(path); len(p.Funcs) != 16 {
		t.Errorf("%d funcs registered, want 16", len(p.Funcs))
	}
}

func Example() {
	// Code that oniondoc generates registers a package's facts at init.
	srcdoc.Register(srcdoc.Package{
		Path: "example.com/todo",
		Funcs: []srcdoc.Func{{
			Name:   "TodoList.Add",
			Doc:    []string{"Add adds a task to the list.", "", "onion:intent write"},
			Params: []string{"title", "priority"},
		}},
		Types: []srcdoc.Type{{Name: "Priority", Enum: []string{`"low"`, `"high"`}}},
	})

	p, _ := srcdoc.Registered("example.com/todo")
	fmt.Println(p.Funcs[0].Name, p.Funcs[0].Params, p.Types[0].Enum)
	// Output: TodoList.Add [title priority] ["low" "high"]
}
