package onion

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Most tool results are a number, a bool or a struct of a few such fields
// and strings (a Booking, a Weather). For them encoding/json's Encoder is
// a pooled state, a cached encoder per type, a reflect walk and a copy into
// our string: about 250 ns for a 3-field struct. A
// scalarEncoder, built once per result type, writes the same bytes
// directly: about 140 ns. It takes only the types whose encoding/json
// bytes leave no choice: no method of their own, no embedded field, no tag
// option but omitempty, plain ASCII names used once. Anything else, and a
// NaN or an infinity (which encoding/json refuses with its own error),
// goes to encoding/json. FuzzScalarResultMatchesEncodingJSON holds it to
// encoding/json's bytes.

// scalarEncoder writes the JSON of one type of result: a scalar of kind
// kind, or a struct of fields.
type scalarEncoder struct {
	kind   reflect.Kind
	fields []scalarField // kind == reflect.Struct
}

// scalarField is one encoded field of a struct.
type scalarField struct {
	offset    uintptr
	name      string // `,"name":`: the comma is left out before the first field written
	kind      reflect.Kind
	omitEmpty bool
}

// newScalarEncoder returns the encoder of t, or nil when t is not one it
// takes. A string result is the model's text as it is, so a string type is
// left alone at the top.
func newScalarEncoder(t reflect.Type) *scalarEncoder {
	if t == nil || !plainType(t) {
		return nil
	}
	if t.Kind() != reflect.Struct {
		if !scalarKind(t.Kind()) || t.Kind() == reflect.String {
			return nil
		}
		return &scalarEncoder{kind: t.Kind()}
	}
	e := &scalarEncoder{kind: reflect.Struct}
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := cutComma(tag)
		if opts != "" && opts != "omitempty" {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		if !bareName(name) || names[name] || !scalarKind(f.Type.Kind()) || !plainType(f.Type) {
			return nil
		}
		names[name] = true
		e.fields = append(e.fields, scalarField{offset: f.Offset, name: `,"` + name + `":`, kind: f.Type.Kind(), omitEmpty: opts == "omitempty"})
	}
	return e
}

func cutComma(tag string) (before, after string, found bool) {
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

// plainType reports whether encoding/json writes values of t by their kind
// alone: t has no marshaling method, on its value or its pointer, and is
// not json.Number.
func plainType(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t != numberType && !t.Implements(jsonMarshalerType) && !t.Implements(textMarshalerType) &&
		!pt.Implements(jsonMarshalerType) && !pt.Implements(textMarshalerType)
}

var numberType = reflect.TypeFor[json.Number]()

func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// bareName reports whether encoding/json takes name as it is and writes
// it without escaping: ASCII letters, digits, '_' and '-'.
func bareName(name string) bool {
	if name == "" {
		return false
	}
	for i := range len(name) {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// text is the JSON of v, a value of e's type; ok is false for a value
// encoding/json must write (or refuse): a NaN or an infinity. The value
// is read where the interface holds it: none of e's types is
// pointer-shaped, so an interface holds a pointer to the value, in its
// second word.
func (e *scalarEncoder) text(v any) (string, bool) {
	p := (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]
	var buf [256]byte // on the stack unless the text is longer
	b := buf[:0]
	ok := true
	if e.kind != reflect.Struct {
		b, ok = appendScalar(b, p, e.kind)
	} else {
		b = append(b, '{')
		first := true
		for i := range e.fields {
			f := &e.fields[i]
			fp := unsafe.Add(p, f.offset)
			if f.omitEmpty && scalarZero(fp, f.kind) {
				continue
			}
			if first {
				b = append(b, f.name[1:]...)
				first = false
			} else {
				b = append(b, f.name...)
			}
			if b, ok = appendScalar(b, fp, f.kind); !ok {
				break
			}
		}
		b = append(b, '}')
	}
	return string(b), ok
}

// appendScalar appends the JSON of the value of kind k at p.
func appendScalar(b []byte, p unsafe.Pointer, k reflect.Kind) ([]byte, bool) {
	switch k {
	case reflect.String:
		return appendJSONString(b, *(*string)(p)), true
	case reflect.Bool:
		return strconv.AppendBool(b, *(*bool)(p)), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return appendInt(b, loadInt(p, k)), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return appendUint(b, loadUint(p, k)), true
	case reflect.Float32:
		return appendJSONFloat(b, float64(*(*float32)(p)), 32)
	case reflect.Float64:
		return appendJSONFloat(b, *(*float64)(p), 64)
	}
	return b, false
}

// scalarZero reports whether the value of kind k at p is its zero, as
// omitempty means it.
func scalarZero(p unsafe.Pointer, k reflect.Kind) bool {
	switch k {
	case reflect.String:
		return len(*(*string)(p)) == 0
	case reflect.Bool:
		return !*(*bool)(p)
	case reflect.Float32:
		return *(*float32)(p) == 0
	case reflect.Float64:
		return *(*float64)(p) == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return loadUint(p, k) == 0
	}
	return loadInt(p, k) == 0
}

func loadInt(p unsafe.Pointer, k reflect.Kind) int64 {
	switch k {
	case reflect.Int8:
		return int64(*(*int8)(p))
	case reflect.Int16:
		return int64(*(*int16)(p))
	case reflect.Int32:
		return int64(*(*int32)(p))
	case reflect.Int64:
		return *(*int64)(p)
	}
	return int64(*(*int)(p))
}

func loadUint(p unsafe.Pointer, k reflect.Kind) uint64 {
	switch k {
	case reflect.Uint8:
		return uint64(*(*uint8)(p))
	case reflect.Uint16:
		return uint64(*(*uint16)(p))
	case reflect.Uint32:
		return uint64(*(*uint32)(p))
	case reflect.Uint64:
		return *(*uint64)(p)
	case reflect.Uintptr:
		return uint64(*(*uintptr)(p))
	}
	return uint64(*(*uint)(p))
}

// appendInt appends n in decimal, as strconv.AppendInt does.
func appendInt(b []byte, n int64) []byte {
	if n < 0 {
		return appendUint(append(b, '-'), uint64(-n)) // -MinInt64 is itself, read unsigned
	}
	return appendUint(b, uint64(n))
}

// appendUint appends n in decimal, as strconv.AppendUint does: for the
// small numbers results hold, without its general path.
func appendUint(b []byte, n uint64) []byte {
	if n < 10 {
		return append(b, byte('0'+n))
	}
	var digits [20]byte
	i := len(digits)
	for n > 0 {
		i--
		digits[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, digits[i:]...)
}

// appendJSONFloat writes f as encoding/json does: the shortest text that
// reads back as f, in exponent form below 1e-6 and from 1e21, with no
// leading zero in a negative exponent.
func appendJSONFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	if bits == 64 && f >= 0 && f < 1e15 && f == float64(uint64(f)) && !math.Signbit(f) {
		// A whole number: below 1e15 a float64 is exact to an eighth, so
		// its shortest text is the integer's (and a strconv.AppendFloat
		// takes about 50 ns more). Not -0, which keeps its sign.
		return appendUint(b, uint64(f)), true
	}
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 → e-7
		b = b[:n-1]
	}
	return b, true
}

// appendJSONString quotes s as encoding/json does with HTML escaping off:
// '"' and '\\' escaped, control characters as \b \f \n \r \t or \u00XX,
// each byte of invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and
// \u2029; everything else as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i = plainRun(s, i); i == len(s) { // most bytes: eight at a time
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
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
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
