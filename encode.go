package onion

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// A result is what encoding/json writes for it, with HTML escaping off: a
// model reads <, > and & better as they are, and they cost fewer tokens.
// Measured on typical results (bench/encode_test.go), encoding/json's
// Encoder took about half the time of json v2 (go-json-experiment) in its
// v1 mode, and as long as sonic but on maps, where sonic was faster; both
// write other bytes (v2 a json.Number as a string, sonic \u0008 for \b
// and U+2028 unescaped), and sonic falls back to encoding/json on other
// platforms and newer Go versions. The hand-written encoder this replaces
// was 10-25% faster than encoding/json, slower than sonic on maps, and not
// always right.
//
// encoding/json catches a cycle, but it recurses into a deep value that is
// not one until the goroutine's stack overflows, a fatal error no recover
// catches. So before it sees a value, a walk makes sure the value nests at
// most maxResultDepth levels. Most result types cannot nest without bound
// (no interface, no recursion): for them the type alone settles it, once,
// and nothing is walked.

// maxResultDepth bounds the nesting of a result, as encoding/json bounds
// what it decodes; every array, object, pointer and interface is a level.
const maxResultDepth = 10000

// errResultTooDeep is the failure of a result that nests deeper.
var errResultTooDeep = fmt.Errorf("the value nests more than %d levels deep (is it cyclic?)", maxResultDepth)

// appendJSON appends the JSON encoding of v, as an encoding/json Encoder
// with SetEscapeHTML(false) writes it, without the newline. A MarshalJSON
// or MarshalText that panics is tool code failing: its panic, which
// encoding/json lets through, is the error.
func appendJSON(b []byte, v any) ([]byte, error) {
	s, err := encodeResult(v, false)
	if err != nil {
		return nil, err
	}
	return append(b, s...), nil
}

// encodeResult is appendJSON's text as a string. An Encoder writes its
// whole value, newline last, in one Write, which copies it straight into
// the string: one copy, one pooled encoder, no buffer of our own. flat
// says that v cannot nest without bound (a tool's result type settles it
// once), so that the walk for its depth is skipped.
func encodeResult(v any, flat bool) (text string, err error) {
	if !flat {
		if err := checkAny(v, 0); err != nil {
			return "", err
		}
	}
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("a MarshalJSON or MarshalText method panicked: %v", r)
		}
	}()
	e := resultEncoders.Get().(*resultEncoder)
	err = e.enc.Encode(v)
	text, e.w.s = e.w.s, ""
	resultEncoders.Put(e) // not after a panic: the encoder is dropped
	if err != nil {
		return "", err
	}
	return text, nil
}

// resultEncoder is an Encoder that writes to w, kept for reuse.
type resultEncoder struct {
	w   stringWriter
	enc *json.Encoder
}

// stringWriter keeps what is written to it as a string, less the newline
// that ends each of an Encoder's writes.
type stringWriter struct{ s string }

func (w *stringWriter) Write(p []byte) (int, error) {
	w.s += string(bytes.TrimSuffix(p, []byte("\n")))
	return len(p), nil
}

var resultEncoders = sync.Pool{New: func() any {
	e := new(resultEncoder)
	e.enc = json.NewEncoder(&e.w)
	e.enc.SetEscapeHTML(false)
	return e
}}

// checkAny is checkDepth for x, the value of an interface, without
// reflection for the values decoded JSON is made of, which are what most
// results of a type that can nest without bound hold.
func checkAny(x any, depth int) error {
	if depth > maxResultDepth {
		return errResultTooDeep
	}
	switch x := x.(type) {
	case nil, string, bool, float64, int, int64:
		return nil
	case []any: // an element is an interface (a level) holding a value
		for _, e := range x {
			if err := checkAny(e, depth+2); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for _, e := range x {
			if err := checkAny(e, depth+2); err != nil {
				return err
			}
		}
		return nil
	}
	return checkDepth(reflect.ValueOf(x), depth)
}

// checkDepth walks v at depth as encoding/json will, and fails once it is
// deeper than maxResultDepth. It skips what cannot nest without bound, and
// may visit more than encoding/json writes (an omitted field, a value whose
// pointer has a MarshalJSON); it never visits less.
func checkDepth(v reflect.Value, depth int) error {
	if depth > maxResultDepth {
		return errResultTooDeep
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
		if !unbounded(v.Type()) {
			return nil
		}
	default:
		return nil // a scalar, the common leaf: no need to look its type up
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if v.CanInterface() {
			return checkAny(v.Interface(), depth+1)
		}
		return checkDepth(v.Elem(), depth+1)
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkDepth(v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := checkDepth(v.Index(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		// One settable element for all the values, unless the map was
		// reached through an embedded unexported type: reflect refuses to
		// copy from it, so each value is its own.
		var elem reflect.Value
		if v.CanInterface() {
			elem = reflect.New(v.Type().Elem()).Elem()
		}
		for iter := v.MapRange(); iter.Next(); {
			e := elem
			if e.IsValid() {
				e.SetIterValue(iter)
			} else {
				e = iter.Value()
			}
			if err := checkDepth(e, depth+1); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if encoded(t.Field(i)) {
				if err := checkDepth(v.Field(i), depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// unboundedTypes caches unbounded: reflect.Type → bool.
var unboundedTypes sync.Map

// unbounded reports whether values of t can nest without bound: t reaches
// an interface, or itself, before a type that marshals itself.
func unbounded(t reflect.Type) bool {
	if u, ok := unboundedTypes.Load(t); ok {
		return u.(bool)
	}
	u := reaches(t, map[reflect.Type]bool{})
	unboundedTypes.Store(t, u)
	return u
}

// encoded reports whether encoding/json may write field f: exported or
// embedded, and not tagged "-".
func encoded(f reflect.StructField) bool {
	return (f.IsExported() || f.Anonymous) && f.Tag.Get("json") != "-"
}

// reaches is unbounded for t, with onPath the types being looked at. Each
// answer is cached as soon as it is known: it does not depend on the path,
// since a type that reaches one on the path lies on a cycle itself.
func reaches(t reflect.Type, onPath map[reflect.Type]bool) bool {
	if u, ok := unboundedTypes.Load(t); ok {
		return u.(bool)
	}
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) {
		return false // encoding/json calls the method and nests no further
	}
	var next []reflect.Type
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		next = []reflect.Type{t.Elem()} // map keys are strings, integers or text
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); encoded(f) {
				next = append(next, f.Type)
			}
		}
	default:
		return false
	}
	if onPath[t] {
		return true
	}
	onPath[t] = true
	defer delete(onPath, t)
	u := slices.ContainsFunc(next, func(n reflect.Type) bool { return reaches(n, onPath) })
	unboundedTypes.Store(t, u)
	return u
}
