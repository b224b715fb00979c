package script

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Starlark has no allocation accounting of its own: a script that builds a
// value a few gigabytes large ends the process with "fatal error: runtime:
// out of memory", which no recover catches. So every operation that can
// build a big value (the ones guard routes through the hooks, and onion's
// own builtins) first estimates the bytes it will allocate and charges them
// to the call's MaxMemory; the operation that would pass it is not run.
//
// What is counted is what the call allocates, not what it keeps: a value
// built and thrown away still counts. Small steps that the hooks do not see
// (an int, a one-character string, a loop variable) are bounded by MaxSteps.

// Sizes, in bytes, charged for the parts of a value.
const (
	slotBytes  = 16 // one element of a list or tuple (a Starlark Value)
	growBytes  = 32 // one element appended to a list or built by a comprehension, with the slice's growth
	entryBytes = 64 // one entry of a dict or set
	tupleBytes = 48 // a small tuple, such as a pair of enumerate or items
	valueBytes = 16 // a number, None or a bool
	otherBytes = 64 // a value of a type onion does not look into (its text form is short)
	maxNesting = 10_000
)

// memory is one call's allocation budget, kept in the thread. Only the
// goroutine running the thread touches it.
type memory struct {
	limit int64
	used  int64
}

const memoryKey = "onion/script.memory"

// allocate charges n bytes about to be allocated by what to the call, and
// refuses them, with an error attempt does not catch, when they would take
// the call past its MaxMemory.
func allocate(thread *starlark.Thread, n int64, what func() string) error {
	m, _ := thread.Local(memoryKey).(*memory)
	if m == nil || n <= 0 {
		return nil
	}
	if n > m.limit-m.used {
		m.used = m.limit + 1 // what is refused still ends the call
		return &limitError{memoryLimitMessage(m.limit, what(), n)}
	}
	m.used += n
	return nil
}

// remaining is what the call may still allocate.
func remaining(thread *starlark.Thread) int64 {
	if m, _ := thread.Local(memoryKey).(*memory); m != nil {
		return max(m.limit-m.used, 0)
	}
	return DefaultMaxMemory
}

func memoryLimitMessage(limit int64, what string, n int64) string {
	return fmt.Sprintf("the call allocated more than %s (script.MaxMemory): %s needs %s more; build smaller values, or raise script.MaxMemory",
		mib(limit), what, mib(n))
}

// mib writes n bytes in MiB, rounded up.
func mib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", (n+1<<20-1)>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// lenOf is the number of elements of v, or 0 when it has no length.
func lenOf(v starlark.Value) int64 {
	if n := starlark.Len(v); n > 0 {
		return int64(n)
	}
	return 0
}

// textSize estimates the bytes of v's text form (str, repr, %, format,
// json.encode): a shared value counts each time it appears, as it is
// written each time. The walk stops as soon as the estimate passes limit,
// and is charged to MaxSteps, so that it ends on a value built by doubling.
func textSize(thread *starlark.Thread, v starlark.Value, limit int64) (int64, error) {
	w := sizer{limit: limit}
	w.walk(v, 0)
	if w.err == nil && w.nodes > 0 {
		w.err = charge(thread, int(min(w.nodes, 1<<40)))
	}
	return w.size, w.err
}

type sizer struct {
	limit, size, nodes int64
	depth              int              // the deepest nesting seen
	path               []starlark.Value // the containers being walked, for cycles
	err                error
}

func (w *sizer) walk(v starlark.Value, depth int) {
	if w.size > w.limit || w.err != nil {
		return
	}
	w.nodes++
	w.depth = max(w.depth, depth)
	if depth > maxNesting {
		w.err = fmt.Errorf("a value nested deeper than %d levels cannot be written as text", maxNesting)
		return
	}
	switch x := v.(type) {
	case starlark.String:
		w.size += int64(len(x)) + 2
		return
	case starlark.Bytes:
		w.size += int64(len(x)) + 3
		return
	case starlark.Int:
		w.size += intBytes(x)
		return
	case starlark.NoneType, starlark.Bool, starlark.Float:
		w.size += 25
		return
	}
	for _, p := range w.path {
		if p == v {
			w.size += 5 // written as [...]
			return
		}
	}
	w.path = append(w.path, v)
	defer func() { w.path = w.path[:len(w.path)-1] }()
	switch x := v.(type) {
	case *starlark.Dict:
		w.size += 2
		for k, e := range starlark.Entries(x) {
			w.size += 4
			w.walk(k, depth+1)
			w.walk(e, depth+1)
			if w.size > w.limit {
				return
			}
		}
	case starlark.Iterable: // list, tuple, set
		w.size += 7
		for e := range starlark.Elements(x) {
			w.size += 2
			w.walk(e, depth+1)
			if w.size > w.limit {
				return
			}
		}
	case *starlarkstruct.Struct:
		w.size += 8
		for _, name := range x.AttrNames() {
			e, _ := x.Attr(name)
			w.size += int64(len(name)) + 3
			if e != nil {
				w.walk(e, depth+1)
			}
		}
	default:
		w.size += otherBytes
	}
}

// intBytes bounds the bytes of x, in memory or written in decimal.
func intBytes(x starlark.Int) int64 {
	if _, ok := x.Int64(); ok {
		return 21
	}
	return int64(x.BigInt().BitLen()/3) + 2
}

// chargeText charges v written as text or JSON, by what.
func chargeText(thread *starlark.Thread, v starlark.Value, what string) error {
	n, err := textSize(thread, v, remaining(thread))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return allocate(thread, n, func() string { return what })
}

// chargeBuilt charges v, just built by one of onion's builtins from an
// input of at most maxInput bytes, which bounds what it can build: a string,
// or a list of strings or of tuples of strings.
func chargeBuilt(thread *starlark.Thread, what string, v starlark.Value) (starlark.Value, error) {
	if err := allocate(thread, builtBytes(v, 2), func() string { return "the result of " + what }); err != nil {
		return nil, err
	}
	return v, nil
}

func builtBytes(v starlark.Value, depth int) int64 {
	switch x := v.(type) {
	case starlark.String:
		return int64(len(x))
	case starlark.Indexable:
		n := slotBytes * int64(x.Len())
		if depth > 0 {
			for i := range x.Len() {
				n += builtBytes(x.Index(i), depth-1)
			}
		}
		return n
	}
	return valueBytes
}
