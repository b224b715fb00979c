package onion

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/onionkit/onion/internal/gosource"
	"github.com/onionkit/onion/srcdoc"
)

// This file turns Go values into tools: funcs with positional parameters,
// funcs with one struct argument, and the methods of a struct instance.
// Raw and typed tools are in rawtool.go, a func's binding in binding.go.

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
)

// NewTool makes a tool of the func fn: a func with positional parameters
// (their names and the description come from the Go source or from the
// oniondoc generator's output), or a func with one struct argument whose
// fields are the parameters. Either may take a context.Context first, and
// may return nothing, a value, an error, or a value and an error. A bound
// method value (todos.Add) is a func too.
func NewTool(fn any, opts ...ToolOption) (*Tool, error) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return nil, fmt.Errorf("onion.NewTool: %s is not a func; pass a func, or use onion.ToolsFrom for a struct instance", describe(fn))
	}
	b, err := funcBinding(v, paramNamesOf(opts))
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		if m, ok := o.(methodOption); ok && m.name != b.goName {
			return nil, fmt.Errorf("onion.NewTool: onion.Method(%q) names another method than %s", m.name, b.display)
		}
	}
	t, err := b.tool(v, v.Interface(), opts)
	if err != nil {
		return nil, err
	}
	if !b.anonymous {
		t.origin = toolOrigin{pc: v.Pointer()}
	}
	return t, nil
}

// toolOrigin identifies the Go value a tool was made of: a named func by
// its code, or one method of one struct instance.
type toolOrigin struct {
	pc     uintptr
	recv   uintptr
	typ    reflect.Type
	method string
}

// bindings caches what a func's type and source say about it as a tool,
// so that the tools of the same funcs and types cost microseconds the
// second time: bindingKey → *binding.
var bindings sync.Map

type bindingKey struct {
	pc     uintptr      // a func's code
	fn     reflect.Type // and its type: funcs made by reflect.MakeFunc share one pc
	names  string       // and the names ParamNames gives its parameters
	recv   reflect.Type // or a method of this pointer type
	method string
}

func funcBinding(v reflect.Value, names []string) (*binding, error) {
	key := bindingKey{pc: v.Pointer(), fn: v.Type(), names: strings.Join(names, ",")}
	if b, ok := bindings.Load(key); ok {
		return b.(*binding), nil
	}
	name := funcName(v)
	facts, pkgPath, found, err := gosource.ForFunc(v)
	missing, err := sourceMissing(name, err)
	if err != nil {
		return nil, err
	}
	b, err := deriveBinding(v.Type(), funcSource{
		goName:    goName(facts, found, name),
		facts:     facts,
		found:     found,
		missing:   missing,
		anonymous: closureRE.MatchString(name),
		named:     names,
		pkgPath:   pkgPath,
		hint:      gosource.FileOf(v),
		display:   "func " + name,
		call:      registeredCall(pkgPath, facts.Name),
	})
	if err != nil {
		return nil, err
	}
	bindings.Store(key, b)
	return b, nil
}

// methodBinding is funcBinding for method m of the pointer type pt, whose
// bound form has type ft; it is nil for a method promoted from an
// embedded field.
func methodBinding(pt reflect.Type, m reflect.Method, ft reflect.Type) (*binding, error) {
	key := bindingKey{recv: pt, method: m.Name}
	if b, ok := bindings.Load(key); ok {
		return b.(*binding), nil
	}
	facts, declared, found, err := gosource.ForMethod(pt, m.Name)
	missing, err := sourceMissing("("+pt.String()+")."+m.Name, err)
	if err != nil {
		return nil, err
	}
	var b *binding
	if declared {
		b, err = deriveBinding(ft, funcSource{
			goName:  m.Name,
			facts:   facts,
			found:   found,
			missing: missing,
			method:  true,
			pkgPath: pt.Elem().PkgPath(),
			hint:    gosource.FileOf(m.Func),
			display: "method (" + pt.String() + ")." + m.Name,
			call:    registeredCall(pt.Elem().PkgPath(), facts.Name),
		})
		if err != nil {
			return nil, err
		}
	}
	bindings.Store(key, b)
	return b, nil
}

// ToolsFrom makes tools of v: for a pointer to a struct, one tool per
// exported method declared on its type (methods promoted from embedded
// fields, Close and String are not tools), all sharing the instance; for a
// func, the tool NewTool makes; a *Tool or []*Tool as they are. An instance
// that is an io.Closer is closed by Agent.Close.
//
// opts apply to every tool made of v; wrap them in Method to give them to
// the tool of one method only.
func ToolsFrom(v any, opts ...ToolOption) ([]*Tool, error) {
	switch x := v.(type) {
	case *Tool:
		if x == nil {
			return nil, errors.New("onion.ToolsFrom: nil *Tool")
		}
		if len(opts) > 0 {
			return nil, fmt.Errorf("onion.ToolsFrom: tool %q is already made; give its options to the call that made it", x.name)
		}
		return []*Tool{x}, nil
	case []*Tool:
		for i, t := range x {
			if t == nil {
				return nil, fmt.Errorf("onion.ToolsFrom: []*Tool element %d is nil", i)
			}
		}
		if len(opts) > 0 {
			return nil, errors.New("onion.ToolsFrom: the tools are already made; give their options to the calls that made them")
		}
		return x, nil
	}
	if o, ok := v.(ToolOption); ok {
		return nil, fmt.Errorf("cannot make tools of the tool option %s: give it with the value it configures, as in onion.ToolsFrom(v, option), and the tools to onion.NewAgent", describeOption(o))
	}
	rv := reflect.ValueOf(v)
	switch {
	case !rv.IsValid():
		return nil, errors.New("onion.ToolsFrom: got nil; pass a func, a pointer to a struct whose methods are tools, a *onion.Tool or a []*onion.Tool")
	case rv.Kind() == reflect.Func:
		t, err := NewTool(v, opts...)
		if err != nil {
			return nil, err
		}
		return []*Tool{t}, nil
	case rv.Kind() == reflect.Pointer && rv.Type().Elem().Kind() == reflect.Struct:
		if rv.IsNil() {
			return nil, fmt.Errorf("onion.ToolsFrom: got a nil %s", rv.Type())
		}
		return methodTools(rv, opts)
	case rv.Kind() == reflect.Struct:
		return nil, fmt.Errorf("onion.ToolsFrom: got a %s value; pass a pointer (&v) so that its methods share one instance", rv.Type())
	}
	return nil, fmt.Errorf("cannot make tools of %s: pass a func, a pointer to a struct whose methods are tools, a *onion.Tool or a []*onion.Tool", describe(v))
}

func methodTools(rv reflect.Value, given []ToolOption) ([]*Tool, error) {
	pt := rv.Type()
	closer, _ := rv.Interface().(io.Closer)
	unmatched := map[string]bool{}
	for _, o := range given {
		if m, ok := o.(methodOption); ok {
			unmatched[m.name] = true
		}
	}
	var tools []*Tool
	var names []string
	for i := range pt.NumMethod() {
		m := pt.Method(i)
		if m.Name == "Close" && m.Type.NumIn() == 1 && m.Type.NumOut() == 1 && m.Type.Out(0) == errorType ||
			m.Name == "String" && m.Type.NumIn() == 1 && m.Type.NumOut() == 1 && m.Type.Out(0).Kind() == reflect.String {
			continue
		}
		b, err := methodBinding(pt, m, rv.Method(i).Type())
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue // promoted from an embedded field
		}
		var opts []ToolOption
		if closer != nil {
			opts = append(opts, WithCloser(closer))
		}
		opts = append(opts, given...)
		t, err := b.tool(rv.Method(i), rv.Interface(), opts)
		if err != nil {
			return nil, err
		}
		t.origin = toolOrigin{recv: rv.Pointer(), typ: pt, method: m.Name}
		tools = append(tools, t)
		names = append(names, m.Name)
		delete(unmatched, m.Name)
	}
	if len(tools) == 0 {
		return nil, fmt.Errorf("onion.ToolsFrom: %s has no exported methods declared on it, so no tools", pt)
	}
	for _, o := range given {
		m, ok := o.(methodOption)
		if !ok || !unmatched[m.name] {
			continue
		}
		return nil, fmt.Errorf("onion.ToolsFrom: onion.Method(%q): %s has no such tool method; its tool methods are %s", m.name, pt, strings.Join(names, ", "))
	}
	return tools, nil
}

// sourceMissing sorts an error reading the source of the func called name:
// a source that moved away (a directory or file that does not exist) is
// only missing, which the no-source rule of binding.tool handles, and is
// returned as the reason; any other error is returned as the error.
func sourceMissing(name string, err error) (missing, _ error) {
	if err == nil {
		return nil, nil
	}
	err = fmt.Errorf("read the source of %s: %w", name, err)
	if errors.Is(err, fs.ErrNotExist) {
		return err, nil
	}
	return nil, err
}

// funcSource is what is known about a func besides its type.
type funcSource struct {
	goName    string
	facts     srcdoc.Func
	found     bool     // facts come from the source or the registry
	missing   error    // why the source could not be read, when it moved away
	anonymous bool     // a func literal, which has no doc comment to lose
	method    bool     // a method of a struct instance
	named     []string // the parameters' names ParamNames gives, if any
	pkgPath   string
	hint      string
	display   string
	call      func(any) *srcdoc.Call // the generated Call maker, if any
}

// identRE matches a parameter's name as ParamNames may give it.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// paramList lists the types of the parameters in, for an error.
func paramList(in []reflect.Type) string {
	types := make([]string, len(in))
	for i, t := range in {
		types[i] = t.String()
	}
	return strings.Join(types, ", ")
}

// generatorHint says how to give a binary the facts its source holds.
const generatorHint = "run `go run github.com/onionkit/onion/cmd/oniondoc` in its package (from a //go:generate line) and rebuild"

// whyNoDoc says why a func's doc comment cannot be read.
func (src funcSource) whyNoDoc() string {
	if src.missing != nil {
		return src.missing.Error() + ", and no generated facts were registered"
	}
	return "its source is not at hand and no generated facts were registered"
}

// indirect is the struct a pointer-to-struct argument points to.
func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// newTool checks the configuration shared by every kind of tool.
func newTool(cfg toolConfig, params *paramSchema, source string) (*Tool, error) {
	t := &Tool{toolConfig: cfg, source: source, params: params}
	if err := t.checkConfig(); err != nil {
		return nil, err
	}
	return t, nil
}

// checkConfig checks the configuration shared by every kind of tool and
// fills in its defaults.
func (t *Tool) checkConfig() error {
	if !toolNameRE.MatchString(t.name) {
		return fmt.Errorf("%s: tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", t.source, t.name)
	}
	if t.intent == "" {
		t.intent = Write
	}
	if _, err := parseIntent(string(t.intent)); err != nil {
		return fmt.Errorf("%s: %w", t.source, err)
	}
	if t.description == "" {
		t.description = "Execute the " + t.name + " tool."
	}
	return nil
}

// isArgStruct reports whether t is a struct argument whose fields are the
// parameters, rather than one positional parameter of a struct type.
func isArgStruct(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t != timeType && !t.Implements(customSchemaType) && !reflect.PointerTo(t).Implements(customSchemaType)
}

// positionalStruct builds the struct type whose fields are the positional
// parameters, so that one derivation and one decoder serve both shapes.
func positionalStruct(in []reflect.Type, names []string, descs map[string]string) (reflect.Type, error) {
	fields := make([]reflect.StructField, len(in))
	for i, t := range in {
		tag := `json:"` + names[i]
		if t.Kind() == reflect.Pointer {
			tag += ",omitempty"
		}
		tag += `"`
		if d := descs[names[i]]; d != "" {
			tag += " doc:" + strconv.Quote(d)
		}
		fields[i] = reflect.StructField{Name: "P" + strconv.Itoa(i), Type: t, Tag: reflect.StructTag(tag)}
	}
	return reflect.StructOf(fields), nil
}

// results is the shape of a tool func's results.
type results struct {
	value, err bool
}

func resultShape(ft reflect.Type) (results, error) {
	switch ft.NumOut() {
	case 0:
		return results{}, nil
	case 1:
		if ft.Out(0) == errorType {
			return results{err: true}, nil
		}
		return results{value: true}, nil
	case 2:
		if ft.Out(1) == errorType {
			return results{value: true, err: true}, nil
		}
	}
	return results{}, errors.New("a tool returns (), (T), (error) or (T, error)")
}

func (r results) extract(out []reflect.Value) (any, error) {
	var v any
	if r.value {
		v = out[0].Interface()
	}
	if r.err {
		if e := out[len(out)-1]; !e.IsNil() {
			return nil, e.Interface().(error)
		}
	}
	return v, nil
}
