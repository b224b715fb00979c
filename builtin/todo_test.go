package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/onionkit/onion"
)

// toolsByName makes the tools of v and indexes them by name.
func toolsByName(t *testing.T, v any) map[string]*onion.Tool {
	t.Helper()
	tools, err := onion.ToolsFrom(v)
	if err != nil {
		t.Fatalf("ToolsFrom: %v", err)
	}
	m := map[string]*onion.Tool{}
	for _, tool := range tools {
		m[tool.Name()] = tool
	}
	return m
}

// call calls the named tool with JSON arguments and fails the test on error.
func call(t *testing.T, tools map[string]*onion.Tool, name, args string) string {
	t.Helper()
	tool, ok := tools[name]
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	out, err := tool.Call(context.Background(), args)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	return out
}

func TestTodoToolsKeepState(t *testing.T) {
	tools := toolsByName(t, NewTodoList())
	if got := call(t, tools, "add", `{"text":"milk"}`); got != `{"id":1,"text":"milk","done":false}` {
		t.Errorf("add milk = %s", got)
	}
	call(t, tools, "add", `{"text":"  bread "}`)
	if got := call(t, tools, "complete", `{"id":1}`); got != `{"id":1,"text":"milk","done":true}` {
		t.Errorf("complete 1 = %s", got)
	}
	if got := call(t, tools, "list", `{}`); got != `[{"id":1,"text":"milk","done":true},{"id":2,"text":"bread","done":false}]` {
		t.Errorf("list = %s", got)
	}
	call(t, tools, "remove", `{"id":1}`)
	if got := call(t, tools, "list", `{}`); got != `[{"id":2,"text":"bread","done":false}]` {
		t.Errorf("list after remove = %s", got)
	}
	// An id is never reused, even after a removal.
	if got := call(t, tools, "add", `{"text":"eggs"}`); got != `{"id":3,"text":"eggs","done":false}` {
		t.Errorf("add eggs = %s", got)
	}
	_, err := tools["complete"].Call(context.Background(), `{"id":1}`)
	if err == nil || !strings.Contains(err.Error(), "existing ids are 2, 3") {
		t.Errorf("complete removed id: err = %v, want it to name ids 2, 3", err)
	}
}

func TestTodoIntents(t *testing.T) {
	want := map[string]onion.Intent{"add": onion.Write, "list": onion.Read, "complete": onion.Write, "remove": onion.Delete}
	tools := toolsByName(t, NewTodoList())
	if len(tools) != len(want) {
		t.Errorf("got %d tools, want %d", len(tools), len(want))
	}
	for name, intent := range want {
		if tool := tools[name]; tool == nil || tool.Intent() != intent {
			t.Errorf("tool %s: missing or intent not %s", name, intent)
		}
	}
	if !tools["complete"].Idempotent() {
		t.Error("complete is not idempotent")
	}
	if d := tools["add"].Description(); !strings.HasPrefix(d, "Puts a new task") || strings.Contains(d, "text:") {
		t.Errorf("add description = %q", d)
	}
	var schema struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tools["add"].Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	if p := schema.Properties["text"]; p.Type != "string" || !strings.Contains(p.Description, "what is to be done") {
		t.Errorf("add schema = %s", tools["add"].Schema())
	}
}

func TestTodoBadInput(t *testing.T) {
	l := NewTodoList()
	l.Add("one")
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"empty text", func() error { _, err := l.Add("  "); return err }, "text is empty"},
		{"long text", func() error { _, err := l.Add(strings.Repeat("x", maxTodoText+1)); return err }, "over the limit"},
		{"bad utf8", func() error { _, err := l.Add("\xff"); return err }, "not valid UTF-8"},
		{"unknown complete", func() error { _, err := l.Complete(7); return err }, "no task with id 7: existing ids are 1"},
		{"unknown remove", func() error { _, err := l.Remove(0); return err }, "no task with id 0: existing ids are 1"},
		{"empty list", func() error { _, err := NewTodoList().Remove(1); return err }, "the list is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if n := len(l.List()); n != 1 {
		t.Errorf("bad input changed the list: %d items", n)
	}
}

func TestTodoFull(t *testing.T) {
	l := NewTodoList()
	for range maxTodoItems {
		if _, err := l.Add("x"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Add("one too many"); err == nil || !strings.Contains(err.Error(), "remove finished ones") {
		t.Errorf("err = %v", err)
	}
	_, err := l.Complete(-1)
	if err == nil || !strings.Contains(err.Error(), "and 980 more") {
		t.Errorf("err = %v, want a shortened id list", err)
	}
}

func TestTodoConcurrent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTodoList()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			it, err := l.Add("task")
			if err != nil {
				t.Error(err)
				return
			}
			l.List()
			if _, err := l.Complete(it.ID); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	items := l.List()
	seen := map[int]bool{}
	for _, it := range items {
		if seen[it.ID] || !it.Done {
			t.Errorf("item %+v duplicated or not done", it)
		}
		seen[it.ID] = true
	}
	if len(items) != 50 {
		t.Errorf("%d items, want 50", len(items))
	}
}

func TestTodoZeroValue(t *testing.T) {
	var l TodoList
	it, err := l.Add("x")
	if err != nil || it.ID != 1 {
		t.Errorf("Add on zero TodoList = %+v, %v", it, err)
	}
	if got := NewTodoList().List(); got == nil || len(got) != 0 {
		t.Errorf("empty List = %#v, want a non-nil empty slice", got)
	}
}

// TestTodoRemoveSaysWhat checks that remove tells the model what it
// removed instead of returning an empty result.
func TestTodoRemoveSaysWhat(t *testing.T) {
	tools := toolsByName(t, NewTodoList())
	call(t, tools, "add", `{"text":"pack"}`)
	call(t, tools, "add", `{"text":"book a hotel"}`)
	if got, want := call(t, tools, "remove", `{"id":1}`), "removed task 1 (pack); 1 left on the list"; got != want {
		t.Errorf("remove = %q, want %q", got, want)
	}
}
