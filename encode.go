package onion

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Results are encoded by a plan built once per Go type, producing exactly
// the bytes encoding/json produces, without its per-call reflection over
// struct fields. Types with their own MarshalJSON or MarshalText, and the
// rare shapes the plan does not cover, are handed to encoding/json.

type encodeFunc func(b []byte, v reflect.Value) ([]byte, error)

var encoders sync.Map // reflect.Type → encodeFunc

// appendJSON appends the JSON encoding of v, as json.Marshal would write it.
func appendJSON(b []byte, v any) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	rv := reflect.ValueOf(v)
	return encoderFor(rv.Type())(b, rv)
}

func encoderFor(t reflect.Type) encodeFunc {
	if f, ok := encoders.Load(t); ok {
		return f.(encodeFunc)
	}
	// A recursive type reaches itself while its encoder is built: the
	// placeholder waits for the real one.
	var wg sync.WaitGroup
	var real encodeFunc
	wg.Add(1)
	f, loaded := encoders.LoadOrStore(t, encodeFunc(func(b []byte, v reflect.Value) ([]byte, error) {
		wg.Wait()
		return real(b, v)
	}))
	if loaded {
		return f.(encodeFunc)
	}
	real = newEncoder(t)
	wg.Done()
	encoders.Store(t, real)
	return real
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func newEncoder(t reflect.Type) encodeFunc {
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return encodeStdlib
	}
	if t == numberType {
		return encodeNumber
	}
	switch t.Kind() {
	case reflect.String:
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendString(b, v.String()), nil }
	case reflect.Bool:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendBool(b, v.Bool()), nil }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendInt(b, v.Int(), 10), nil }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(b []byte, v reflect.Value) ([]byte, error) { return strconv.AppendUint(b, v.Uint(), 10), nil }
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendFloat(b, v.Float(), bits) }
	case reflect.Pointer:
		elem := encoderFor(t.Elem())
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			return elem(b, v.Elem())
		}
	case reflect.Interface:
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			e := v.Elem()
			return encoderFor(e.Type())(b, e)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return encodeStdlib // base64
		}
		elem := encoderFor(t.Elem())
		return func(b []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(b, "null"...), nil
			}
			return appendElems(b, v, elem)
		}
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return encodeStdlib
		}
		elem := encoderFor(t.Elem())
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendElems(b, v, elem) }
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textMarshalerType) || reflect.PointerTo(t.Key()).Implements(textMarshalerType) {
			return encodeStdlib
		}
		elem := encoderFor(t.Elem())
		return func(b []byte, v reflect.Value) ([]byte, error) { return appendMap(b, v, elem) }
	case reflect.Struct:
		return structEncoder(t)
	}
	return encodeStdlib // channels, funcs, complex numbers: encoding/json's error
}

var numberType = reflect.TypeFor[json.Number]()

// encodeNumber writes a json.Number as the number it holds, as
// encoding/json does, refusing text that is not a number.
func encodeNumber(b []byte, v reflect.Value) ([]byte, error) {
	n := v.String()
	if n == "" {
		n = "0"
	}
	sc := scanner{s: n}
	if lit, err := sc.numberText("number"); err != nil || lit != n {
		return nil, fmt.Errorf("json: invalid number literal %q", n)
	}
	return append(b, n...), nil
}

// encodeStdlib hands the value to encoding/json.
func encodeStdlib(b []byte, v reflect.Value) ([]byte, error) {
	if !v.CanInterface() {
		return nil, fmt.Errorf("cannot encode unexported value of type %s", v.Type())
	}
	out, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, err
	}
	return append(b, out...), nil
}

func appendElems(b []byte, v reflect.Value, elem encodeFunc) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i := range v.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = elem(b, v.Index(i)); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func appendMap(b []byte, v reflect.Value, elem encodeFunc) ([]byte, error) {
	if v.IsNil() {
		return append(b, "null"...), nil
	}
	type entry struct {
		key   string
		value reflect.Value
	}
	entries := make([]entry, 0, v.Len())
	iter := v.MapRange()
	for iter.Next() {
		entries = append(entries, entry{iter.Key().String(), iter.Value()})
	}
	slices.SortFunc(entries, func(x, y entry) int { return strings.Compare(x.key, y.key) })
	b = append(b, '{')
	var err error
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, e.key)
		b = append(b, ':')
		if b, err = elem(b, e.value); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

type encodeField struct {
	key       []byte // "name":
	index     []int
	omitEmpty bool
	omitZero  bool
	enc       encodeFunc
}

func structEncoder(t reflect.Type) encodeFunc {
	var fields []encodeField
	for _, f := range jsonFields(t) {
		sf := t.FieldByIndex(f.index)
		opts := ""
		if _, o, ok := strings.Cut(sf.Tag.Get("json"), ","); ok {
			opts = "," + o + ","
		}
		if strings.Contains(opts, ",string,") {
			return encodeStdlib // quoted numbers: rare, leave them to encoding/json
		}
		fields = append(fields, encodeField{
			key:       append(appendString(nil, f.name), ':'),
			index:     f.index,
			omitEmpty: strings.Contains(opts, ",omitempty,"),
			omitZero:  strings.Contains(opts, ",omitzero,"),
			enc:       encoderFor(f.typ),
		})
	}
	return func(b []byte, v reflect.Value) ([]byte, error) {
		b = append(b, '{')
		first := true
		var err error
		for i := range fields {
			f := &fields[i]
			fv, ok := readField(v, f.index)
			if !ok || f.omitEmpty && isEmpty(fv) || f.omitZero && isZero(fv) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, f.key...)
			if b, err = f.enc(b, fv); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
}

// readField follows index through embedded pointers; a nil one hides the
// field, as in encoding/json.
func readField(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

var isZeroerType = reflect.TypeFor[interface{ IsZero() bool }]()

func isZero(v reflect.Value) bool {
	if v.Type().Implements(isZeroerType) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return v.Interface().(interface{ IsZero() bool }).IsZero()
	}
	if reflect.PointerTo(v.Type()).Implements(isZeroerType) && v.CanAddr() {
		return v.Addr().Interface().(interface{ IsZero() bool }).IsZero()
	}
	return v.IsZero()
}

// appendFloat formats as encoding/json does: like ES6, exponents only for
// very small and very large numbers, and no NaN or infinity.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, bits)}
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does, HTML-safe: <, > and & are
// escaped, as are U+2028 and U+2029; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
