package onion

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/onionkit/onion/srcdoc"
)

// This file is a func's binding as a tool: what its type and its source
// (or generated facts) say of its parameters, results and doc, derived once
// per func, and the frames a call decodes its arguments into.

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
