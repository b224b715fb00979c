// Package srcdoc holds what Go source says about a package — doc comments,
// parameter names, struct field docs and enum values — in a form that can be
// compiled into a binary, and the generated Calls that run its funcs
// without reflection.
//
// Reflection gives a tool's types but not its parameter names or docs; those
// live only in the source. When a binary runs where its source is not, the
// facts come from code written by the oniondoc generator, whose init func
// calls [Register]:
//
//	//go:generate go run github.com/onionkit/onion/cmd/oniondoc
//
// Source read at run time takes precedence where the build recorded it —
// the absolute files the runtime names for funcs, in a build without
// -trimpath: there it is the truth, even when the generated file is stale
// (oniondoc -check finds that). Registered facts serve binaries run where
// their source is not, and win over any source found by other means; the
// working directory is never searched, so a go.mod and files planted there
// cannot change a tool's description, intent or approval.
package srcdoc

import (
	"context"
	"reflect"
	"sync"
)

// Package is what the source says about one Go package.
type Package struct {
	Path  string // import path as reflect and runtime report it ("main" for a main package)
	Funcs []Func
	Types []Type
}

// Func is what the source says about a func or method.
type Func struct {
	// Name is "Search" for a func and "TodoList.Add" for a method: the
	// receiver's type name without '*' or type parameters.
	Name string
	// Doc is the doc comment's lines without comment markers. Directive
	// lines are kept without their slashes ("onion:intent read"), interior
	// blank lines are kept as "", and /* */ comments are split into lines.
	Doc []string
	// Params are the parameter names in order, the receiver excluded; an
	// unnamed or "_" parameter is "".
	Params []string
	// Call, which the generator writes for exported funcs and methods of
	// the shapes a tool has, makes of a value the Call that runs the func
	// without reflection: for a func, the func itself; for a method, a
	// pointer to its receiver or its bound method value. It returns nil for
	// a value of another type, as when the source has changed since the
	// file was generated. The source's facts never carry it.
	Call func(fn any) *Call `json:"-"`
}

// A Call runs one func with arguments held in a struct: the func's own
// struct argument, or a struct whose fields are its parameters after a
// context.Context, in order. onion decodes a model's arguments into the
// struct and calls the func through it, where it would otherwise call it
// by reflection.
type Call struct {
	args   reflect.Type
	invoke func(ctx context.Context, args any) (any, error)
}

// NewCall makes the Call of fn, which runs the func with the arguments in
// *args and returns its result (nil when it has none, or when it failed)
// and its error. Generated code calls it.
func NewCall[A any](fn func(ctx context.Context, args *A) (any, error)) *Call {
	return &Call{args: reflect.TypeFor[A](), invoke: func(ctx context.Context, args any) (any, error) {
		return fn(ctx, args.(*A))
	}}
}

// Args is the struct type A of the arguments.
func (c *Call) Args() reflect.Type { return c.args }

// Invoke runs the func; args is a pointer to a struct of type Args.
func (c *Call) Invoke(ctx context.Context, args any) (any, error) { return c.invoke(ctx, args) }

// Type is what the source says about a named type.
type Type struct {
	Name   string
	Doc    []string // as for [Func.Doc]
	Fields []Field  // struct fields in order; empty for non-struct types
	// Enum holds the values of the package's constants of this type, in
	// declaration order, as JSON literals: `"low"` for a string, `3` for an
	// integer.
	Enum []string
}

// Field is what the source says about a struct field. An embedded field is
// named after its type ("Mutex" for an embedded sync.Mutex).
type Field struct {
	Name string
	Doc  []string // the field's doc comment, or its line comment if it has none
}

// registry maps an import path to the facts registered for it. Stored
// packages are never modified in place, so values handed out by Registered
// stay valid while later registrations replace them.
var registry struct {
	mu   sync.RWMutex
	pkgs map[string]Package
}

// Register records the facts of a package; generated init funcs call it.
// A later registration for the same path merges with the earlier one: funcs
// and types with a name already present replace it, new ones are appended.
func Register(p Package) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.pkgs == nil {
		registry.pkgs = make(map[string]Package)
	}
	old, ok := registry.pkgs[p.Path]
	if !ok {
		p.Funcs = clone(p.Funcs)
		p.Types = clone(p.Types)
		registry.pkgs[p.Path] = p
		return
	}
	old.Funcs = merge(old.Funcs, p.Funcs, func(f Func) string { return f.Name })
	old.Types = merge(old.Types, p.Types, func(t Type) string { return t.Name })
	registry.pkgs[p.Path] = old
}

// Registered returns the facts registered for the import path. The returned
// slices are shared: read them, do not modify them.
func Registered(path string) (Package, bool) {
	registry.mu.RLock()
	p, ok := registry.pkgs[path]
	registry.mu.RUnlock()
	return p, ok
}

// merge returns a new slice holding old with each element of add replacing
// the element of the same name, or appended when there is none.
func merge[E any](old, add []E, name func(E) string) []E {
	out := clone(old)
	at := make(map[string]int, len(out))
	for i, e := range out {
		at[name(e)] = i
	}
	for _, e := range add {
		if i, ok := at[name(e)]; ok {
			out[i] = e
			continue
		}
		at[name(e)] = len(out)
		out = append(out, e)
	}
	return out
}

func clone[E any](s []E) []E {
	if s == nil {
		return nil
	}
	return append(make([]E, 0, len(s)), s...)
}
