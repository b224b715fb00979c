package onion

import (
	"context"
	"reflect"
	"sync"
	"unsafe"

	"github.com/onionkit/onion/srcdoc"
)

// A package that runs the oniondoc generator registers, with each exported
// func and method of a tool's shape, a Call that runs it without
// reflection (srcdoc.Func.Call): its arguments are decoded into the
// Call's struct and the func is called directly, so that a tool made by
// NewTool or ToolsFrom costs what one made by NewTypedTool does. A Call is
// used only when its struct is laid out as the tool's arguments are
// decoded; otherwise, and for funcs without one, the tool calls by
// reflection.

// registeredCall returns the generated Call maker of the func or method
// name (a srcdoc name, "TodoList.Add") of package pkgPath, or nil.
func registeredCall(pkgPath, name string) func(any) *srcdoc.Call {
	if name == "" {
		return nil
	}
	p, ok := srcdoc.Registered(pkgPath)
	if !ok {
		return nil
	}
	for _, f := range p.Funcs {
		if f.Name == name {
			return f.Call
		}
	}
	return nil
}

// generated returns the tool's call through the Call the generated code
// makes of v (the func, or the receiver of a method), or nil when there is
// none that fits.
func (b *binding) generated(t *Tool, v any) func(ctx context.Context, args string) (any, error) {
	if b.call == nil {
		return nil
	}
	c := b.call(v)
	if c == nil || !sameLayout(c.Args(), b.elemType) {
		return nil
	}
	params, needsPtr, argsType := b.params, b.needsPtr, c.Args()
	frames := &sync.Pool{New: func() any { return newGenFrame(argsType) }}
	return func(ctx context.Context, args string) (any, error) {
		var f *genFrame
		if needsPtr {
			f = newGenFrame(argsType) // the func may keep the pointer it gets
		} else {
			f = frames.Get().(*genFrame)
		}
		if err := params.decodeInto(ctx, t.name, args, f.ptr); err != nil {
			f.release(frames, needsPtr, params.plan.flat)
			return nil, err
		}
		out, err := c.Invoke(ctx, f.args)
		f.release(frames, needsPtr, params.plan.flat) // a panic drops f
		return out, err
	}
}

// genFrame is the struct a generated call's arguments are decoded into.
type genFrame struct {
	v    reflect.Value // the struct
	args any           // a pointer to it, for Invoke
	ptr  unsafe.Pointer
}

func newGenFrame(t reflect.Type) *genFrame {
	p := reflect.New(t)
	return &genFrame{v: p.Elem(), args: p.Interface(), ptr: p.UnsafePointer()}
}

// release clears f and, unless the func was given f's struct itself, puts
// it back for the next call; flat as for callFrame.release.
func (f *genFrame) release(frames *sync.Pool, given bool, flat *flatPlan) {
	if given {
		return
	}
	if flat != nil {
		flat.clear(f.ptr)
	} else {
		f.v.SetZero()
	}
	frames.Put(f)
}

// sameLayout reports whether a struct of type a holds the same types at
// the same offsets as one of type e, so that arguments decoded for e can
// be read as an a: the same type; structs of the same field types and
// offsets (a generated struct of positional parameters, say, against the
// one onion makes with its tags); or a struct whose one field, at offset
// 0, is laid out as the other type.
func sameLayout(a, e reflect.Type) bool {
	if a == e {
		return true
	}
	if a.Kind() != reflect.Struct || e.Kind() != reflect.Struct || a.Size() != e.Size() {
		return false
	}
	if a.NumField() == 1 && a.Field(0).Offset == 0 && sameLayout(a.Field(0).Type, e) ||
		e.NumField() == 1 && e.Field(0).Offset == 0 && sameLayout(a, e.Field(0).Type) {
		return true
	}
	if a.NumField() != e.NumField() {
		return false
	}
	for i := range a.NumField() {
		fa, fe := a.Field(i), e.Field(i)
		if fa.Type != fe.Type || fa.Offset != fe.Offset {
			return false
		}
	}
	return true
}
