package script

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// hooks are the predeclared names guard's rewrite calls: each charges what
// an operation will allocate, then does what the interpreter would have.
var hooks = starlark.StringDict{
	"$binary":  starlark.NewBuiltin("$binary", hookBinary),
	"$augment": starlark.NewBuiltin("$augment", hookAugment),
	"$slice":   starlark.NewBuiltin("$slice", hookSlice),
	"$attr":    starlark.NewBuiltin("$attr", hookAttr),
	"$elem":    starlark.NewBuiltin("$elem", hookElem),
	"$none":    starlark.None,
}

var tokens = map[string]syntax.Token{}

func init() {
	for _, op := range binaryOf {
		tokens[op.String()] = op
	}
	tokens["|"] = syntax.PIPE
}

// hookBinary is x op y.
func hookBinary(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	op, x, y := tokens[string(args[0].(starlark.String))], args[1], args[2]
	if err := chargeBinary(thread, op, x, y); err != nil {
		return nil, err
	}
	return starlark.Binary(op, x, y)
}

// chargeBinary charges the result of x op y.
func chargeBinary(thread *starlark.Thread, op syntax.Token, x, y starlark.Value) error {
	n, err := binarySize(thread, op, x, y)
	if err != nil {
		return err
	}
	return allocate(thread, n, func() string { return fmt.Sprintf("%s %s %s", x.Type(), op, y.Type()) })
}

func binarySize(thread *starlark.Thread, op syntax.Token, x, y starlark.Value) (int64, error) {
	switch op {
	case syntax.PLUS:
		return elemBytes(x)*lenOf(x) + elemBytes(y)*lenOf(y) + numBytes(x) + numBytes(y), nil
	case syntax.PIPE:
		return entryBytes*(lenOf(x)+lenOf(y)) + numBytes(x) + numBytes(y), nil
	case syntax.STAR:
		if n, ok := repeatCount(y); ok && lenOf(x) > 0 {
			return mulBytes(elemBytes(x)*lenOf(x), n), nil
		}
		if n, ok := repeatCount(x); ok && lenOf(y) > 0 {
			return mulBytes(elemBytes(y)*lenOf(y), n), nil
		}
		return numBytes(x) + numBytes(y), nil
	case syntax.PERCENT:
		format, ok := x.(starlark.String)
		if !ok {
			return numBytes(x) + numBytes(y), nil
		}
		size, err := textSize(thread, y, remaining(thread))
		return int64(len(format)) + int64(strings.Count(string(format), "%")+1)*size, err
	}
	return 0, nil
}

// repeatCount is v as a repeat count, when it is one.
func repeatCount(v starlark.Value) (int64, bool) {
	i, ok := v.(starlark.Int)
	if !ok {
		return 0, false
	}
	n, ok := i.Int64()
	if !ok {
		return 1 << 62, true
	}
	return max(n, 0), true
}

// mulBytes is a*b, saturated.
func mulBytes(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > 1<<62 {
		return 1 << 62
	}
	return int64(lo)
}

// elemBytes is what one element of v takes: a byte of a string, a slot of
// a list or tuple, an entry of a dict or set.
func elemBytes(v starlark.Value) int64 {
	switch v.(type) {
	case starlark.String, starlark.Bytes:
		return 1
	case *starlark.Dict, *starlark.Set:
		return entryBytes
	}
	return slotBytes
}

// numBytes is what an int result built from v may take.
func numBytes(v starlark.Value) int64 {
	if i, ok := v.(starlark.Int); ok {
		return intBytes(i)
	}
	return 0
}

// hookAugment is x op= y: a list is extended in place by +=, a dict
// updated in place by |=, as the interpreter does; otherwise x op y.
func hookAugment(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	op, x, y := tokens[string(args[0].(starlark.String))], args[1], args[2]
	switch xs := x.(type) {
	case *starlark.List:
		if yi, ok := y.(starlark.Iterable); ok && op == syntax.PLUS {
			if err := allocate(thread, growBytes*lenOf(y), func() string { return "list += " + y.Type() }); err != nil {
				return nil, err
			}
			elems := make([]starlark.Value, 0, lenOf(y)) // y may be x
			for e := range starlark.Elements(yi) {
				elems = append(elems, e)
			}
			for _, e := range elems {
				if err := xs.Append(e); err != nil {
					return nil, fmt.Errorf("cannot apply += to %s", strings.TrimPrefix(err.Error(), "cannot append to "))
				}
			}
			return xs, nil
		}
	case *starlark.Dict:
		if yd, ok := y.(*starlark.Dict); ok && op == syntax.PIPE {
			if err := allocate(thread, entryBytes*lenOf(y), func() string { return "dict |= dict" }); err != nil {
				return nil, err
			}
			for _, kv := range yd.Items() {
				if err := xs.SetKey(kv[0], kv[1]); err != nil {
					return nil, fmt.Errorf("cannot apply |= to %s", strings.TrimPrefix(err.Error(), "cannot insert into "))
				}
			}
			return xs, nil
		}
	}
	if err := chargeBinary(thread, op, x, y); err != nil {
		return nil, err
	}
	return starlark.Binary(op, x, y)
}

// hookElem is an element added to a list or dict, by a comprehension or an
// assignment to an index.
func hookElem(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	if err := allocate(thread, growBytes, func() string { return "an element added to a list or dict" }); err != nil {
		return nil, err
	}
	return args[0], nil
}

// hookSlice is x[lo:hi:step], with the interpreter's rules and messages.
func hookSlice(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, lo, hi, stepv := args[0], args[1], args[2], args[3]
	sliceable, ok := x.(starlark.Sliceable)
	if !ok {
		return nil, fmt.Errorf("invalid slice operand %s", x.Type())
	}
	n := sliceable.Len()
	step := 1
	if stepv != starlark.None {
		var err error
		if step, err = starlark.AsInt32(stepv); err != nil {
			return nil, fmt.Errorf("invalid slice step: %s", err)
		}
		if step == 0 {
			return nil, fmt.Errorf("zero is not a valid slice step")
		}
	}
	var start, end int
	if step > 0 {
		start, end = 0, n
		if err := asIndex(lo, n, &start); err != nil {
			return nil, fmt.Errorf("invalid start index: %s", err)
		}
		if err := asIndex(hi, n, &end); err != nil {
			return nil, fmt.Errorf("invalid end index: %s", err)
		}
		start, end = min(max(start, 0), n), min(max(end, 0), n)
		end = max(end, start)
	} else {
		start, end = n-1, -1
		if err := asIndex(lo, n, &start); err != nil {
			return nil, fmt.Errorf("invalid start index: %s", err)
		}
		if err := asIndex(hi, n, &end); err != nil {
			return nil, fmt.Errorf("invalid end index: %s", err)
		}
		start, end = min(start, n-1), max(end, -1)
		start = max(start, end)
	}
	count := int64((abs(end-start) + abs(step) - 1) / abs(step))
	_, isString := x.(starlark.String)
	_, isBytes := x.(starlark.Bytes)
	if step != 1 || !isString && !isBytes { // a plain substring shares its string
		if err := allocate(thread, count*elemBytes(x), func() string { return "a slice of a " + x.Type() }); err != nil {
			return nil, err
		}
	}
	return sliceable.Slice(start, end, step), nil
}

func asIndex(v starlark.Value, n int, result *int) error {
	if v == starlark.None {
		return nil
	}
	i, err := starlark.AsInt32(v)
	if err != nil {
		return err
	}
	if i < 0 {
		i += n
	}
	*result = i
	return nil
}

func abs(i int) int { return max(i, -i) }

// hookAttr is x.name; a method that builds a value comes back guarded.
func hookAttr(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	if ha, ok := x.(starlark.HasAttrs); ok {
		if v, err := ha.Attr(name); err == nil && v != nil {
			return guardMethod(v), nil
		}
	}
	// Let the interpreter tell what is wrong, spelling hint included.
	_, err := starlark.EvalExprOptions(&syntax.FileOptions{}, thread, &syntax.DotExpr{X: ident("x", syntax.Position{}), Name: ident(name, syntax.Position{})}, starlark.StringDict{"x": x})
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		return nil, errors.New(ee.Msg)
	}
	if err == nil {
		err = fmt.Errorf("%s has no .%s field or method", x.Type(), name)
	}
	return nil, err
}

// guardMethod wraps a method of a built-in type that builds a value so
// that it charges the value first.
func guardMethod(v starlark.Value) starlark.Value {
	b, ok := v.(*starlark.Builtin)
	if !ok || b.Receiver() == nil {
		return v
	}
	size := methodSizes[b.Receiver().Type()+"."+b.Name()]
	if size == nil {
		return v
	}
	return guarded(b, size)
}

// A sizer estimates the bytes a call of a builtin allocates.
type sizeFunc func(thread *starlark.Thread, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int64, error)

// guarded is b, charging what size says before each call.
func guarded(b *starlark.Builtin, size sizeFunc) *starlark.Builtin {
	return starlark.NewBuiltin(b.Name(), func(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		n, err := size(thread, b.Receiver(), args, kwargs)
		if err != nil {
			return nil, err
		}
		what := func() string {
			if r := b.Receiver(); r != nil {
				return r.Type() + "." + b.Name()
			}
			return b.Name()
		}
		if err := allocate(thread, n, what); err != nil {
			return nil, err
		}
		return b.CallInternal(thread, args, kwargs)
	})
}
