package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/invopop/jsonschema"

	"github.com/onionkit/onion/internal/gosource"
	"github.com/onionkit/onion/srcdoc"
)

// This file turns Go values into tools: funcs with positional parameters,
// funcs with one struct argument, the methods of a struct instance, and raw
// handlers with a ready schema.

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

// binding is what a func's type and source say about it as a tool.
type binding struct {
	display   string
	goName    string
	cfg       toolConfig // as the doc comment declares it
	params    *paramSchema
	in        []reflect.Type // the parameters after a context
	names     []string
	ft        reflect.Type
	pkgPath   string
	hasCtx    bool
	structArg bool
	needsPtr  bool
	elemType  reflect.Type // what the arguments decode into
	res       results
	hint      string // a source file of the func
	anonymous bool   // a func literal: it needs onion.Name
	// noDoc says why the doc comment, which may hold a description and
	// onion: directives, could not be read; "" when it was, or when there
	// is none to read (a func literal).
	noDoc  string
	method bool
	// signature is the Signature of a tool of the binding under its own
	// name, rendered once.
	signature string
	// call makes the generated Call of a func or receiver (gencall.go);
	// nil when none is registered.
	call func(any) *srcdoc.Call
	// frames holds the callFrames of the binding's tools: the func gets
	// its arguments by value, so the struct they are decoded into, and the
	// context's Value, serve call after call; except for a func that takes
	// a pointer to its struct, which it may keep.
	frames sync.Pool
}

func deriveBinding(ft reflect.Type, src funcSource) (*binding, error) {
	if ft.IsVariadic() {
		return nil, fmt.Errorf("%s: variadic funcs cannot be tools; take a slice instead", src.display)
	}
	in := make([]reflect.Type, ft.NumIn())
	for i := range in {
		in[i] = ft.In(i)
	}
	hasCtx := len(in) > 0 && in[0] == contextType
	if hasCtx {
		in = in[1:]
	}
	for _, t := range in {
		if t == contextType {
			return nil, fmt.Errorf("%s: context.Context must be the first parameter", src.display)
		}
	}
	res, err := resultShape(ft)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.display, err)
	}

	names := src.facts.Params
	if hasCtx && len(names) > 0 {
		names = names[1:]
	}
	if src.named != nil {
		if len(src.named) != len(in) || len(in) == 1 && isArgStruct(in[0]) {
			return nil, fmt.Errorf("%s: onion.ParamNames gives %d names, for %s: give one name for each parameter after a context.Context, in order",
				src.display, len(src.named), paramList(in))
		}
		seen := map[string]bool{}
		for _, n := range src.named {
			if !identRE.MatchString(n) || seen[n] {
				return nil, fmt.Errorf("%s: onion.ParamNames: %q is not a name a parameter can have: use letters, digits and _, each name once", src.display, n)
			}
			seen[n] = true
		}
		names = src.named
	}
	structArg := len(in) == 1 && isArgStruct(in[0])
	var argType reflect.Type
	var paramNames []string
	if structArg {
		argType = in[0]
		for _, f := range jsonFields(indirect(argType)) {
			paramNames = append(paramNames, f.name)
		}
	} else {
		if len(in) > 0 && src.named == nil && src.anonymous {
			return nil, fmt.Errorf("%s: the names of its parameters (%s) are unknown, as a func literal's are: "+
				"give them with onion.ParamNames, one for each, or take one struct argument whose fields name the parameters", src.display, paramList(in))
		}
		if len(in) > 0 && src.named == nil && (!src.found || len(names) != len(in)) {
			return nil, fmt.Errorf("%s: the names of its parameters (%s) are unknown: %s; "+
				"%s, give them with onion.ParamNames, or take one struct argument whose fields name the parameters", src.display, paramList(in), src.whyNoDoc(), generatorHint)
		}
		for i, n := range names {
			if n == "" || n == "_" {
				return nil, fmt.Errorf("%s: parameter %d has no name; name it, so that the model knows what to pass", src.display, i+1)
			}
		}
		paramNames = names
	}

	var doc toolDoc
	if src.found {
		if doc, err = parseDoc(src.facts.Doc, paramNames); err != nil {
			return nil, fmt.Errorf("%s: %w", src.display, err)
		}
		doc.description = withoutName(doc.description, src.goName, src.facts.Name)
	}
	cfg := toolConfig{name: snakeCase(src.goName), description: doc.description, intent: Intent(doc.directives.Intent),
		idempotent: doc.directives.Idempotent, additive: doc.directives.Additive, approve: doc.directives.Approve}

	var params *paramSchema
	needsPtr := structArg && argType.Kind() == reflect.Pointer
	if needsPtr {
		argType = argType.Elem() // decoded into a new struct whose address the func gets
	}
	if structArg {
		params, err = paramsFor(argType, src.hint)
		if err == nil && len(doc.params) > 0 {
			params, err = params.withDescriptions(doc.params, argType)
		}
	} else {
		argType, err = positionalStruct(in, names, doc.params)
		if err == nil {
			params, err = paramsFor(argType, src.hint)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.display, err)
	}

	b := &binding{
		display: src.display, goName: src.goName, cfg: cfg, params: params,
		in: in, names: names, ft: ft, pkgPath: src.pkgPath, hint: src.hint,
		hasCtx: hasCtx, structArg: structArg, needsPtr: needsPtr, elemType: argType, res: res,
		anonymous: src.anonymous, method: src.method, call: src.call,
	}
	if !src.found && !src.anonymous {
		b.noDoc = src.whyNoDoc()
	}
	b.signature = signature(cfg.name, in, names, ft, src.pkgPath)
	b.frames.New = func() any { return b.newFrame() }
	return b, nil
}

// newFrame makes a callFrame for a call of b's func, the arguments it
// will be called with pointing into the frame.
func (b *binding) newFrame() *callFrame {
	arg := reflect.New(b.elemType)
	f := &callFrame{arg: arg, ptr: arg.UnsafePointer()}
	if b.hasCtx {
		f.in = append(f.in, reflect.ValueOf(&f.ctx).Elem())
	}
	switch {
	case b.needsPtr:
		f.in = append(f.in, arg)
	case b.structArg:
		f.in = append(f.in, arg.Elem())
	default:
		for i := range len(b.in) {
			f.in = append(f.in, arg.Elem().Field(i))
		}
	}
	return f
}

// tool makes a tool of fn, whose binding b is; gen is what the generated
// Call is made of: the func, or the receiver of a method.
func (b *binding) tool(fn reflect.Value, gen any, opts []ToolOption) (*Tool, error) {
	t := &Tool{toolConfig: b.cfg, source: b.display, params: b.params}
	t.goName = b.goName
	for _, o := range opts {
		o.applyTool(&t.toolConfig)
	}
	if b.anonymous && !t.named {
		return nil, fmt.Errorf("%s: an anonymous func has no name to call it by; give it one with onion.Name", b.display)
	}
	if err := b.checkSaid(t.toolConfig); err != nil {
		return nil, err
	}
	if err := t.checkConfig(); err != nil {
		return nil, err
	}
	t.signature = b.signature
	if t.name != b.cfg.name {
		t.signature = signature(t.name, b.in, b.names, b.ft, b.pkgPath)
	}
	if b.res.value {
		t.result, t.resultHint = b.ft.Out(0), b.hint
		t.flatResult = t.result.Kind() != reflect.Interface && !unbounded(t.result)
		t.resultEnc = newScalarEncoder(t.result)
	}
	params, hasCtx, needsPtr, res := b.params, b.hasCtx, b.needsPtr, b.res
	frames := &b.frames
	t.invoke = func(ctx context.Context, args string) (any, error) {
		var f *callFrame
		if needsPtr {
			f = b.newFrame()
		} else {
			f = frames.Get().(*callFrame)
		}
		if err := params.decodeInto(ctx, t.name, args, f.ptr); err != nil {
			f.release(frames, needsPtr, params.plan.flat)
			return nil, err
		}
		if hasCtx {
			f.ctx = ctx
		}
		out := fn.Call(f.in) // a panic drops f
		f.release(frames, needsPtr, params.plan.flat)
		return res.extract(out)
	}
	if call := b.generated(t, gen); call != nil {
		t.invoke, t.generatedCall = call, true
	}
	return t, nil
}

// callFrame is what one call of a reflected func is made of: the
// arguments' struct and the context.
type callFrame struct {
	arg reflect.Value // a pointer to the struct
	ptr unsafe.Pointer
	ctx context.Context
	in  []reflect.Value // the func's arguments: the context, the struct or its fields
}

// release clears f and, unless the func was given f's struct itself,
// puts it back for the next call; flat, when the arguments have a flat
// plan, clears what decoding wrote (the func got copies).
func (f *callFrame) release(frames *sync.Pool, given bool, flat *flatPlan) {
	if given {
		return
	}
	if flat != nil {
		flat.clear(f.ptr)
	} else {
		f.arg.Elem().SetZero()
	}
	f.ctx = nil
	frames.Put(f)
}

// checkSaid refuses a tool whose doc comment could not be read unless its
// options say what the doc comment would have: its description, its intent
// and whether it needs approval. Otherwise a //onion:approve or
// //onion:intent delete would be lost without a word, and a refund would
// run unasked.
func (b *binding) checkSaid(cfg toolConfig) error {
	if b.noDoc == "" {
		return nil
	}
	var lack []string
	if cfg.description == "" {
		lack = append(lack, "onion.Description")
	}
	if cfg.intent == "" {
		lack = append(lack, "an intent (onion.Read, onion.Write or onion.Delete)")
	}
	if !cfg.approve && cfg.approveIf == nil && !cfg.noApproval {
		lack = append(lack, "onion.RequireApproval, onion.ApproveIf or onion.NoApproval")
	}
	if len(lack) == 0 {
		return nil
	}
	how := "options that say them"
	if b.method {
		how += ", through onion.ToolsFrom(v, onion.Method(" + strconv.Quote(b.goName) + ", ...))"
	}
	return fmt.Errorf("%s: its doc comment cannot be read (%s), so its description and //onion: directives (intent, approval) would be lost; "+
		"%s, or give it %s: %s", b.display, b.noDoc, generatorHint, how, strings.Join(lack, "; "))
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

// signature renders the tool in Go syntax: search(query string, limit int) []string.
// The types of the tool's own package go unqualified.
func signature(name string, in []reflect.Type, names []string, ft reflect.Type, pkgPath string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	for i, t := range in {
		if i > 0 {
			b.WriteString(", ")
		}
		n := "args"
		if i < len(names) && names[i] != "" {
			n = names[i]
		}
		b.WriteString(n + " ")
		writeType(&b, t, pkgPath)
	}
	b.WriteByte(')')
	if ft.NumOut() > 0 && ft.Out(0) != errorType {
		b.WriteByte(' ')
		writeType(&b, ft.Out(0), pkgPath)
	}
	return b.String()
}

// writeType writes t as reflect does ("[]domain.Item"), except that the
// named types of package pkgPath lose their qualifier ("[]Ticket").
func writeType(b *strings.Builder, t reflect.Type, pkgPath string) {
	if t.Name() != "" {
		if pkgPath != "" && t.PkgPath() == pkgPath {
			b.WriteString(t.Name())
		} else {
			b.WriteString(t.String())
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		b.WriteByte('*')
		writeType(b, t.Elem(), pkgPath)
	case reflect.Slice:
		b.WriteString("[]")
		writeType(b, t.Elem(), pkgPath)
	case reflect.Array:
		b.WriteString("[" + strconv.Itoa(t.Len()) + "]")
		writeType(b, t.Elem(), pkgPath)
	case reflect.Map:
		b.WriteString("map[")
		writeType(b, t.Key(), pkgPath)
		b.WriteByte(']')
		writeType(b, t.Elem(), pkgPath)
	default:
		b.WriteString(t.String())
	}
}

var closureRE = regexp.MustCompile(`\.func\d+(\.\d+)*$`)

// funcName is the runtime name of a func: pkg/path.Name.
func funcName(v reflect.Value) string {
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return "an unknown func"
	}
	return strings.TrimSuffix(f.Name(), "-fm")
}

// goName is the Go name of the func or method: Search, Add, from its facts
// or else from its runtime name.
func goName(facts srcdoc.Func, found bool, name string) string {
	if found && facts.Name != "" {
		if i := strings.LastIndex(facts.Name, "."); i >= 0 {
			return facts.Name[i+1:]
		}
		return facts.Name
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// describeOption names a tool option for a message.
func describeOption(o ToolOption) string {
	switch o := o.(type) {
	case methodOption:
		return "onion.Method(" + strconv.Quote(o.name) + ", ...)"
	case Intent:
		if o != "" {
			return "onion." + strings.ToUpper(string(o[:1])) + string(o[1:])
		}
	}
	return describe(o)
}

func describe(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}

// NewRawTool makes a tool of a ready JSON Schema and a handler that
// receives the raw JSON arguments, already validated against the schema.
// It is how tools whose shape is only known at run time are built (a
// remote MCP server's tools, script tools). The handler's result is sent
// like a Go tool's: a string as it is, anything else as JSON.
func NewRawTool(name string, schema json.RawMessage, fn func(ctx context.Context, args json.RawMessage) (any, error), opts ...ToolOption) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("onion.NewRawTool %q: nil handler", name)
	}
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var s jsonschema.Schema
	unmarshalErr := json.Unmarshal(schema, &s)
	if unmarshalErr != nil {
		loose, err := looseSchema(schema)
		if err != nil {
			return nil, fmt.Errorf("onion.NewRawTool %q: schema is not a JSON Schema: %w", name, unmarshalErr)
		}
		s = *loose
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("onion.NewRawTool %q: the parameters schema must have type object, got %q", name, s.Type)
	}
	if s.Properties == nil {
		s.Properties = jsonschema.NewProperties()
	}
	params, err := rawParams(schema, &s)
	if err != nil {
		return nil, fmt.Errorf("onion.NewRawTool %q: %w", name, err)
	}
	cfg := toolConfig{name: name}
	for _, o := range opts {
		if m, ok := o.(methodOption); ok {
			return nil, fmt.Errorf("onion.NewRawTool %q: onion.Method(%q) applies to methods; give the options themselves", name, m.name)
		}
		o.applyTool(&cfg)
	}
	t, err := newTool(cfg, params, "raw tool "+strconv.Quote(name))
	if err != nil {
		return nil, err
	}
	t.signature = t.name + "(args object)"
	t.invoke = func(ctx context.Context, args string) (any, error) {
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		if err := params.explain(ctx, t.name, args, nil); err != nil {
			return nil, err
		}
		return fn(ctx, json.RawMessage(args))
	}
	return t, nil
}

// NewTypedTool makes a tool of a func whose argument struct and result are
// known at compile time. It derives the same schema, name and description
// as NewTool, and calls fn without reflection: the arguments decode
// straight into an In. In must be a struct whose fields are the
// parameters.
func NewTypedTool[In, Out any](fn func(context.Context, In) (Out, error), opts ...ToolOption) (*Tool, error) {
	if fn == nil {
		return nil, errors.New("onion.NewTypedTool: nil func")
	}
	if in := reflect.TypeFor[In](); !isArgStruct(in) || in.Kind() != reflect.Struct {
		return nil, fmt.Errorf("onion.NewTypedTool: the argument %s must be a struct whose fields are the parameters", in)
	}
	t, err := NewTool(fn, opts...)
	if err != nil {
		return nil, err
	}
	params, name := t.params, t.name
	// The arguments are decoded into a pooled In, which fn gets a copy of.
	ins := sync.Pool{New: func() any { return new(In) }}
	t.invoke = func(ctx context.Context, args string) (any, error) {
		p := ins.Get().(*In)
		err := params.decodeInto(ctx, name, args, unsafe.Pointer(p))
		in := *p
		*p = *new(In)
		ins.Put(p)
		if err != nil {
			return nil, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return t, nil
}
