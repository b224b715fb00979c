package script

import (
	"errors"
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// attempt is the attempt builtin: attempt(fn, *args, **kwargs) calls fn and
// returns struct(ok, value, error) instead of ending the call when fn fails.
// The call's own limits (steps, time, requests) are not failures it catches.
func attempt(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: want a function to call, as in attempt(fn, arg)", b.Name())
	}
	fn, ok := args[0].(starlark.Callable)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not callable", b.Name(), args[0].Type())
	}
	v, err := starlark.Call(thread, fn, args[1:], kwargs)
	if err != nil {
		if st, _ := thread.Local(stateKey).(*callState); st != nil && st.ctx.Err() != nil {
			return nil, err
		}
		var le *limitError
		if errors.As(err, &le) || thread.Local(outOfStepsKey) != nil {
			return nil, err
		}
		msg := err.Error()
		var ee *starlark.EvalError
		if errors.As(err, &ee) {
			msg = strings.TrimPrefix(ee.Msg, "fail: ")
		}
		return outcome(false, starlark.None, starlark.String(msg)), nil
	}
	return outcome(true, v, starlark.None), nil
}

func outcome(ok bool, value, err starlark.Value) *starlarkstruct.Struct {
	return starlarkstruct.FromStringDict(starlark.String("attempt"), starlark.StringDict{
		"ok": starlark.Bool(ok), "value": value, "error": err,
	})
}

// dig is the dig builtin: dig(value, key, ..., default=None) looks keys up
// one after the other (dict keys, list indexes, attributes) and returns
// default as soon as one is missing.
func dig(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	def := starlark.Value(starlark.None)
	for _, kv := range kwargs {
		if k, _ := starlark.AsString(kv[0]); k != "default" {
			return nil, fmt.Errorf("%s: unexpected keyword argument %s", b.Name(), kv[0])
		}
		def = kv[1]
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: want a value and keys, as in dig(answer, \"body\")", b.Name())
	}
	v := args[0]
	for _, key := range args[1:] {
		next, found, err := lookup(v, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		if !found {
			return def, nil
		}
		v = next
	}
	return v, nil
}

// lookup is v[key] for a mapping, v[int] for a sequence (negative from the
// end) and v.key for a value with attributes.
func lookup(v, key starlark.Value) (starlark.Value, bool, error) {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, false, nil
	case starlark.Mapping:
		e, found, err := x.Get(key)
		if err != nil {
			return nil, false, nil // an unhashable key is simply not there
		}
		return e, found, nil
	case starlark.Indexable:
		if _, isStr := key.(starlark.String); isStr {
			return nil, false, nil
		}
		i, err := starlark.AsInt32(key)
		if err != nil {
			return nil, false, fmt.Errorf("a %s is indexed by an integer, not %s", v.Type(), key.Type())
		}
		if i < 0 {
			i += x.Len()
		}
		if i < 0 || i >= x.Len() {
			return nil, false, nil
		}
		return x.Index(i), true, nil
	case starlark.HasAttrs:
		name, ok := starlark.AsString(key)
		if !ok {
			return nil, false, nil
		}
		e, err := x.Attr(name)
		if err != nil || e == nil {
			return nil, false, nil
		}
		return e, true, nil
	}
	return nil, false, nil
}

// maxStepsKey holds the thread's step limit, so that builtins can charge
// their own work to it.
const maxStepsKey = "onion/script.maxSteps"

// charge counts work done in Go (bytes scanned, nodes visited) against the
// call's MaxSteps, one step per stepBytes units, so that a builtin over big
// input ends the call like an endless loop would instead of running on.
func charge(thread *starlark.Thread, units int) error {
	thread.Steps += uint64(units/stepBytes) + 1
	limit, _ := thread.Local(maxStepsKey).(int)
	if limit > 0 && thread.Steps >= uint64(limit) {
		thread.SetLocal(outOfStepsKey, true)
		return &limitError{stepLimitMessage(limit)}
	}
	return nil
}

// stepBytes is how many bytes of input a builtin handles for one step.
const stepBytes = 16

// maxInput bounds the text one builtin call takes (re, text, html, xml).
const maxInput = 16 << 20

func checkInput(what string, s string) error {
	if len(s) > maxInput {
		return &limitError{fmt.Sprintf("%s: the input is %d bytes; at most %d are handled", what, len(s), maxInput)}
	}
	return nil
}
