package onion

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/onionkit/onion/internal/gentools"
	"github.com/onionkit/onion/srcdoc"
)

// reflected makes the tool of fn, or of method name of recv, as if no
// Call were registered for it: the tool calls by reflection.
func reflected(t *testing.T, fn any, recv any, name string) *Tool {
	t.Helper()
	var b *binding
	var v reflect.Value
	var err error
	if recv != nil {
		rv := reflect.ValueOf(recv)
		m, _ := rv.Type().MethodByName(name)
		v = rv.Method(m.Index)
		b, err = methodBinding(rv.Type(), m, v.Type())
	} else {
		v = reflect.ValueOf(fn)
		b, err = funcBinding(v, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	call := b.call
	b.call = nil
	defer func() { b.call = call }()
	tool, err := b.tool(v, recv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tool.generatedCall {
		t.Fatalf("%s: a generated call without a Call", tool.name)
	}
	return tool
}

// TestGeneratedCallsMatchReflection calls the tools of every shape the
// generator writes a Call for through their Calls and by reflection: the
// same results, the same errors, the same panics.
func TestGeneratedCallsMatchReflection(t *testing.T) {
	ctx := context.Background()
	counter, twin := &gentools.Counter{}, &gentools.Counter{}
	methods, err := ToolsFrom(counter)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := NewTool(counter.Inc, Name("inc_bound"))
	if err != nil {
		t.Fatal(err)
	}
	type pair struct {
		gen, refl *Tool
		args      []string
	}
	fn := func(f any, args ...string) pair {
		gen, err := NewTool(f)
		if err != nil {
			t.Fatal(err)
		}
		return pair{gen, reflected(t, f, nil, ""), args}
	}
	pairs := []pair{
		fn(gentools.Greet, `{"name":"ada","n":2}`, `{"name":"nobody","n":1}`, `{"name":"ada","n":20}`, `{"name":"ada"}`, `{"name":"a\u0064a","n":3}`, `{"n":1,"name":"x","extra":1}`, `nope`),
		fn(gentools.GreetPtr, `{"name":"ada","n":2}`, `{"name":"ada","n":0}`),
		fn(gentools.Add, `{"a":1.5,"b":2.25}`, `{"a":1e308,"b":1e308}`, `{"a":"1","b":2}`, `{"a":1}`),
		fn(gentools.Check, `{"n":3,"strict":true}`, `{"n":3,"strict":false}`, `{"n":3.5,"strict":true}`),
		fn(gentools.Ping, `{}`, ``, `{"x":1}`),
		fn(gentools.Touch, `{"at":"2026-12-24T10:00:00Z","every":"90s"}`, `{"at":"yesterday","every":"90s"}`),
		fn(gentools.Panic, `{"msg":"boom"}`),
		fn(gentools.Move, `{"X":1,"Y":2}`, `{"X":"1","Y":2}`),
		{gen: bound, refl: reflected(t, nil, twin, "Inc"), args: []string{`{"by":2}`, `{"by":-1}`, `{}`}},
	}
	for _, m := range methods {
		pairs = append(pairs, pair{m, reflected(t, nil, twin, m.goName), []string{`{"by":3}`, `{}`, `{"by":true}`}})
	}
	if len(methods) != 2 {
		t.Fatalf("Counter has %d tools, want Inc and Get", len(methods))
	}
	for _, p := range pairs {
		if !p.gen.generatedCall {
			t.Errorf("%s: no generated call", p.gen.name)
		}
		for _, args := range p.args {
			got, gotErr := p.gen.Call(ctx, args)
			want, wantErr := p.refl.Call(ctx, args)
			var gp, wp *PanicError
			if errors.As(gotErr, &gp) && errors.As(wantErr, &wp) {
				if gp.Value != wp.Value {
					t.Errorf("%s(%s): panicked with %v, by reflection %v", p.gen.name, args, gp.Value, wp.Value)
				}
				continue
			}
			if got != want || errText(gotErr) != errText(wantErr) {
				t.Errorf("%s(%s) = %q, %v; by reflection %q, %v", p.gen.name, args, got, gotErr, want, wantErr)
			}
		}
	}
	if counter.Get() != twin.Get() || counter.Get() == 0 {
		t.Errorf("counter %d, by reflection %d", counter.Get(), twin.Get())
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), "inc_bound", "inc")
}

// staleArgs is laid out unlike the arguments of staleTool.
type staleArgs struct{ P0 int }

// staleTool is a tool whose registered Call does not fit it.
//
// x: a number
//
//onion:intent read
func staleTool(x float64) float64 { return x * 2 }

// mismatchedTool is a tool whose registered Call does not take it.
//
// x: a number
//
//onion:intent read
func mismatchedTool(x float64) float64 { return x * 3 }

// TestGeneratedCallThatDoesNotFit: a Call whose struct is laid out unlike
// the tool's arguments, or that does not take the func, is not used; the
// tool calls by reflection.
func TestGeneratedCallThatDoesNotFit(t *testing.T) {
	srcdoc.Register(srcdoc.Package{Path: "github.com/onionkit/onion", Funcs: []srcdoc.Func{
		{Name: "staleTool", Call: func(fn any) *srcdoc.Call {
			return srcdoc.NewCall(func(ctx context.Context, a *staleArgs) (any, error) { return a.P0, nil })
		}},
		{Name: "mismatchedTool", Call: func(fn any) *srcdoc.Call {
			if f, ok := fn.(func(int) int); ok {
				return srcdoc.NewCall(func(ctx context.Context, a *staleArgs) (any, error) { return f(a.P0), nil })
			}
			return nil
		}},
	}})
	for _, c := range []struct {
		fn   any
		want string
	}{{staleTool, "3"}, {mismatchedTool, "4.5"}} {
		tool, err := NewTool(c.fn)
		if err != nil {
			t.Fatal(err)
		}
		if tool.generatedCall {
			t.Errorf("%s: uses a Call that does not fit", tool.name)
		}
		if out, err := tool.Call(context.Background(), `{"x":1.5}`); err != nil || out != c.want {
			t.Errorf("%s = %q, %v; want %s", tool.name, out, err, c.want)
		}
	}
}

func TestSameLayout(t *testing.T) {
	type ab struct {
		A float64 `json:"a"`
		B int
	}
	type pq struct {
		P0 float64
		P1 int
	}
	type ba struct {
		B int
		A float64
	}
	type one struct{ P0 ab }
	type short struct{ P0 float64 }
	for _, c := range []struct {
		a, e reflect.Type
		want bool
	}{
		{reflect.TypeFor[ab](), reflect.TypeFor[ab](), true},
		{reflect.TypeFor[pq](), reflect.TypeFor[ab](), true},
		{reflect.TypeFor[one](), reflect.TypeFor[ab](), true},
		{reflect.TypeFor[ab](), reflect.TypeFor[one](), true},
		{reflect.TypeFor[ba](), reflect.TypeFor[ab](), false},
		{reflect.TypeFor[short](), reflect.TypeFor[ab](), false},
		{reflect.TypeFor[struct{ P0 *ab }](), reflect.TypeFor[ab](), false},
		{reflect.TypeFor[int](), reflect.TypeFor[ab](), false},
	} {
		if got := sameLayout(c.a, c.e); got != c.want {
			t.Errorf("sameLayout(%s, %s) = %v, want %v", c.a, c.e, got, c.want)
		}
	}
}
