package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/onionkit/onion"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// fileOptions are the dialect scripts are written in: no while loops, no
// recursion, no top-level control flow, so that a script's shape is plain.
var fileOptions = &syntax.FileOptions{Set: true}

// predeclared are the names a script has besides Starlark's universe.
var predeclared = starlark.StringDict{
	"request": starlark.NewBuiltin("request", safe(request)),
	"ok":      starlark.NewBuiltin("ok", safe(ok)),
	"attempt": starlark.NewBuiltin("attempt", safe(attempt)),
	"dig":     starlark.NewBuiltin("dig", safe(dig)),
	"re":      reModule,
	"text":    textModule,
	"html":    htmlModule,
	"xml":     xmlModule,
}

func init() {
	// json and the builtins that build values are guarded (sizes.go); the
	// hooks are what guard's rewrite calls (hooks.go).
	for _, names := range []starlark.StringDict{universe, hooks} {
		for name, v := range names {
			predeclared[name] = v
		}
	}
	predeclared["json"] = jsonModule
}

// jsonModule is the guarded json module with each function made safe, so
// that what json.decode makes of a text is redacted like any builtin's
// result.
var jsonModule = func() *starlarkstruct.Module {
	m := &starlarkstruct.Module{Name: guardedJSON.Name, Members: starlark.StringDict{}}
	for name, v := range guardedJSON.Members {
		b := v.(*starlark.Builtin)
		m.Members[name] = starlark.NewBuiltin(b.Name(), safe(func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return b.CallInternal(thread, args, kwargs)
		}))
	}
	return m
}()

// Load reads the Starlark file at path and returns its tools: one per
// top-level function whose name does not start with "_".
func Load(path string, opts ...Option) ([]*onion.Tool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return Parse(path, string(src), opts...)
}

// Parse is Load of the source src; filename names it in errors.
func Parse(filename, src string, opts ...Option) ([]*onion.Tool, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	f, err := fileOptions.Parse(filename, src, 0)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	for _, stmt := range f.Stmts {
		if l, ok := stmt.(*syntax.LoadStmt); ok {
			return nil, fmt.Errorf("script: %s: load is not allowed: a script is one file", l.Load)
		}
	}
	guardFile(f)
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	thread := newThread(filename, cfg)
	globals, err := prog.Init(thread, predeclared)
	if err != nil {
		return nil, fmt.Errorf("script: running the top level of %s: %w", filename, evalError(err))
	}
	globals.Freeze()

	var tools []*onion.Tool
	for _, stmt := range f.Stmts {
		def, ok := stmt.(*syntax.DefStmt)
		if !ok || strings.HasPrefix(def.Name.Name, "_") {
			continue
		}
		fn, ok := globals[def.Name.Name].(*starlark.Function)
		if !ok {
			continue
		}
		t, err := newTool(cfg, fn, docPos(def))
		if err != nil {
			return nil, fmt.Errorf("script: %w", err)
		}
		tools = append(tools, t)
	}
	if len(tools) == 0 {
		return nil, fmt.Errorf("script: %s defines no tools: a tool is a top-level def whose name does not start with _", filename)
	}
	return tools, nil
}

// docPos is the position of def's docstring, or of def when it has none.
func docPos(def *syntax.DefStmt) syntax.Position {
	if len(def.Body) > 0 {
		if e, ok := def.Body[0].(*syntax.ExprStmt); ok {
			if lit, ok := e.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
				return lit.TokenPos
			}
		}
	}
	return def.Def
}

// outOfStepsKey marks a thread that reached MaxSteps.
const outOfStepsKey = "onion/script.outOfSteps"

func newThread(name string, cfg *config) *starlark.Thread {
	t := &starlark.Thread{Name: name, Print: func(*starlark.Thread, string) {}}
	t.SetMaxExecutionSteps(uint64(cfg.maxSteps))
	t.SetLocal(maxStepsKey, cfg.maxSteps)
	t.SetLocal(memoryKey, &memory{limit: cfg.maxMemory})
	t.SetLocal(redactorKey, cfg.redactor)
	t.OnMaxSteps = func(t *starlark.Thread) {
		t.SetLocal(outOfStepsKey, true) // so that attempt lets the error through
		t.Cancel(stepLimitMessage(cfg.maxSteps))
	}
	return t
}

func stepLimitMessage(limit int) string {
	return fmt.Sprintf("the step limit of %d was reached (script.MaxSteps); is there an endless loop?", limit)
}

// tool is one script function made a tool.
type tool struct {
	cfg    *config
	fn     *starlark.Function
	intent onion.Intent
	params []param
}

// call runs the function for one tool call.
func (t *tool) call(ctx context.Context, raw json.RawMessage) (result any, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, t.cfg.timeout,
		fmt.Errorf("the call took longer than %v (script.Timeout)", t.cfg.timeout))
	defer cancel()
	thread := newThread(t.fn.Name(), t.cfg)
	st := &callState{cfg: t.cfg, ctx: ctx, intent: t.intent}
	thread.SetLocal(stateKey, st)
	// Cancel stops the interpreter; a request in flight ends with ctx.
	stop := context.AfterFunc(ctx, func() { thread.Cancel(context.Cause(ctx).Error()) })
	defer stop()
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, fmt.Errorf("%s: internal error in the script runtime: %v", t.fn.Name(), r)
		}
	}()

	kwargs, err := t.kwargs(raw)
	if err != nil {
		return nil, err
	}
	v, err := starlark.Call(thread, t.fn, nil, kwargs)
	if err != nil {
		var causes []error
		if ctx.Err() != nil {
			causes = append(causes, ctx.Err())
		}
		if st.mutated {
			causes = append(causes, onion.ErrOutcomeUnknown)
		}
		return nil, t.cfg.redactor.error(withCauses(evalError(err), causes))
	}
	// The result is converted and encoded for the model: a value built by
	// doubling would be written out whole.
	if err := chargeText(thread, v, "the result"); err != nil {
		return nil, fmt.Errorf("%s: %w", t.fn.Name(), err)
	}
	g, err := toGo(v)
	if err != nil {
		return nil, t.cfg.redactor.error(fmt.Errorf("%s returned a value the model cannot read: %w", t.fn.Name(), err))
	}
	// What the script joined itself, from pieces no redaction saw whole.
	return t.cfg.redactor.goValue(g), nil
}

// kwargs turns the model's arguments into keyword arguments.
func (t *tool) kwargs(raw json.RawMessage) ([]starlark.Tuple, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, nil
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: arguments: %w", t.fn.Name(), err)
	}
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("%s: arguments must be a JSON object, not %s", t.fn.Name(), v.Type())
	}
	var kwargs []starlark.Tuple
	for _, p := range t.params {
		a, found, _ := d.Get(starlark.String(p.name))
		if !found {
			continue
		}
		if i, isInt := a.(starlark.Int); isInt && p.typ == "number" {
			a = starlark.Float(i.Float())
		}
		kwargs = append(kwargs, starlark.Tuple{starlark.String(p.name), a})
	}
	return kwargs, nil
}

// scriptError is a Starlark error told the way Go tells errors: where, what,
// and the calls that led there.
type scriptError struct {
	msg string
	err *starlark.EvalError
}

func (e *scriptError) Error() string { return e.msg }
func (e *scriptError) Unwrap() error { return e.err }

// evalError makes a Starlark runtime error read "file:line:col: message
// (in fn, called from caller at file:line:col)".
func evalError(err error) error {
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		return err
	}
	var frames starlark.CallStack
	for _, fr := range ee.CallStack {
		if fr.Pos.Filename() != "<builtin>" {
			frames = append(frames, fr)
		}
	}
	if len(frames) == 0 {
		return &scriptError{ee.Msg, ee}
	}
	inner := frames[len(frames)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (in %s", inner.Pos, ee.Msg, inner.Name)
	for i := len(frames) - 2; i >= 0; i-- {
		fmt.Fprintf(&b, ", called from %s at %s", frames[i].Name, frames[i].Pos)
	}
	b.WriteString(")")
	return &scriptError{b.String(), ee}
}

// withCauses wraps err with causes a caller may test for with errors.Is,
// without changing its text.
func withCauses(err error, causes []error) error {
	if len(causes) == 0 {
		return err
	}
	return &causedError{err, causes}
}

type causedError struct {
	err    error
	causes []error
}

func (e *causedError) Error() string   { return e.err.Error() }
func (e *causedError) Unwrap() []error { return append([]error{e.err}, e.causes...) }

// safe turns a panic in a builtin into a Starlark error, so that nothing a
// script does can crash the agent, and redacts the builtin's result and
// error as they cross back into the script (boundary.go).
func safe(fn func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (v starlark.Value, err error) {
		defer func() {
			if r := recover(); r != nil {
				v, err = nil, fmt.Errorf("internal error: %v", r)
			}
		}()
		return crossing(thread)(fn(thread, b, args, kwargs))
	}
}
