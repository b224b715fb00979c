package onion

import (
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
	"unsafe"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// Most tools take a flat object of scalars: strings, numbers, bools. For
// them a flatPlan reads the arguments in one pass over their bytes,
// checking each value (enum, bounds, lengths, pattern, format: the same
// checks as the jsontext plan) and storing it at its field's offset, with
// no tokenizer and no reflection. It accepts only what it is sure of:
// anything else — an escape in a string, invalid UTF-8, a number that is
// not a plain integer where one is wanted, a nested value, an unknown or
// repeated name, a value that fails a check, a syntax error — makes it
// give up, and the jsontext plan reads the arguments again from the start
// and says what is wrong in its own words. So the flat plan decides
// nothing on its own but the common case: arguments it accepts, the
// jsontext plan accepts with the same values (FuzzFlatDecode holds it to
// that), and every rejection and its text come from the jsontext plan.

// flatPlan reads a flat object of scalars into a struct.
type flatPlan struct {
	fields   []flatField
	required uint64 // the bits of the required fields
	defaults uint64 // the bits of the fields with a default
	size     uintptr
}

// flatField is one field of a flat object.
type flatField struct {
	name string
	// prefix is what comes before the field's value in compact arguments
	// that give the fields in order: `{"name":` for the first, `,"name":`
	// for the others. words are its bytes as two little-endian words,
	// and masks the bytes of each it fills, when it is at most 16 bytes
	// long, so that comparing it takes two loads; masks are 0 for a
	// longer one.
	size     uint8 // the field's size in bytes, 16 for a string
	prefix   string
	words    [2]uint64
	masks    [2]uint64
	offset   uintptr
	kind     reflect.Kind
	required bool
	checks   *checks // nil when the schema asks nothing of the value
	// rng holds a number's bounds when they are its only checks and
	// exact float64s: most values are decided by comparing floats.
	rng *numRange
	def flatValue
}

// numRange is a number's bounds, as float64s.
type numRange struct {
	min, max         float64 // ±Inf when absent
	minExcl, maxExcl bool
}

// rangeOf returns the range of bounds, when each is an exact float64 and
// each side has at most one.
func rangeOf(bounds []bound) (*numRange, bool) {
	r := &numRange{min: math.Inf(-1), max: math.Inf(1)}
	var hasMin, hasMax bool
	for _, b := range bounds {
		if !b.exact {
			return nil, false
		}
		switch b.op {
		case ">=", ">":
			if hasMin {
				return nil, false
			}
			hasMin, r.min, r.minExcl = true, b.f, b.op == ">"
		case "<=", "<":
			if hasMax {
				return nil, false
			}
			hasMax, r.max, r.maxExcl = true, b.f, b.op == "<"
		default:
			return nil, false
		}
	}
	return r, true
}

// check compares v, a number rounded to the nearest float64 (exact says
// it was not rounded), with the range: a value that compares strictly
// with a bound compares the same way before rounding, as rounding keeps
// order; one equal to a bound after rounding is left undecided.
func (r *numRange) check(v float64, exact bool) (ok, decided bool) {
	switch {
	case v < r.min || v > r.max:
		return false, true
	case v > r.min && v < r.max:
		return true, true
	case !exact:
		return false, false
	}
	return !(v == r.min && r.minExcl || v == r.max && r.maxExcl), true
}

// checkNumber applies f's checks to the number lit, whose value is v,
// exactly when exact.
func (f *flatField) checkNumber(lit string, v float64, exact bool) bool {
	if f.rng != nil {
		if ok, decided := f.rng.check(v, exact); decided {
			return ok
		}
	}
	return f.checks == nil || f.checks.checkNumber(lit) == nil
}

// flatValue is a field's default, by its kind.
type flatValue struct {
	s string
	i int64
	u uint64
	f float64
	b bool
}

// newFlatPlan returns the flat plan of struct type t, whose jsontext plan
// is p and compiled schema cs, or nil when t's arguments are not a flat
// object of scalars whose checks the flat plan applies.
func newFlatPlan(t reflect.Type, p *objectPlan, cs *santhosh.Schema, fields []jsonField) *flatPlan {
	if len(p.fields) > 64 || p.allowUnknown || p.escapedNames {
		return nil
	}
	fp := &flatPlan{size: t.Size()}
	for i, f := range p.fields {
		jf := fieldNamed(fields, f.name)
		if jf == nil || !flatKind(jf.typ) || !plainName(f.name) {
			return nil
		}
		offset, ok := fieldOffset(t, f.index)
		if !ok {
			return nil
		}
		prop := cs.Properties[f.name]
		if inner, ok := nullable(prop); ok {
			prop = inner
		}
		c, err := newChecks(prop)
		if err != nil {
			return nil
		}
		ff := flatField{name: f.name, offset: offset, kind: jf.typ.Kind(), required: f.required, size: uint8(jf.typ.Size())}
		if ff.kind == reflect.String {
			ff.size = 16 // on 32-bit platforms too, where it is 8 bytes
		}
		ff.prefix = `,"` + f.name + `":`
		if i == 0 {
			ff.prefix = `{"` + f.name + `":`
		}
		if n := len(ff.prefix); n <= 16 {
			var b [16]byte
			copy(b[:], ff.prefix)
			for j := 15; j >= 0; j-- {
				w := j / 8
				ff.words[w] = ff.words[w]<<8 | uint64(b[j])
				ff.masks[w] <<= 8
				if j < n {
					ff.masks[w] |= 0xff
				}
			}
		}
		if c.enum != nil || c.bounds != nil || c.minLen >= 0 || c.maxLen >= 0 || c.pattern != nil || c.format != nil {
			ff.checks = c
		}
		if c.enum == nil && c.bounds != nil {
			ff.rng, _ = rangeOf(c.bounds)
		}
		if f.required {
			fp.required |= 1 << i
		}
		if f.def.IsValid() {
			fp.defaults |= 1 << i
			switch d := f.def; {
			case d.Kind() == reflect.String:
				ff.def.s = d.String()
			case d.Kind() == reflect.Bool:
				ff.def.b = d.Bool()
			case d.CanInt():
				ff.def.i = d.Int()
			case d.CanUint():
				ff.def.u = d.Uint()
			case d.CanFloat():
				ff.def.f = d.Float()
			}
		}
		fp.fields = append(fp.fields, ff)
	}
	return fp
}

func fieldNamed(fields []jsonField, name string) *jsonField {
	for i := range fields {
		if fields[i].name == name {
			return &fields[i]
		}
	}
	return nil
}

// flatKind reports whether the jsontext plan decodes values of t as a
// plain scalar of its kind: not a time.Duration, a json.Number, or a type
// with a schema or an unmarshaling method of its own.
func flatKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
	default:
		return false
	}
	pt := reflect.PointerTo(t)
	return t != durationType && t != numberType &&
		!pt.Implements(customSchemaType) && !t.Implements(customSchemaType) &&
		!pt.Implements(jsonUnmarshalerType) && !pt.Implements(textUnmarshalerType)
}

// plainName reports whether name is written in JSON as it is: valid
// UTF-8, no quote, backslash or control character, so that the bytes of a
// name in the arguments match it exactly when they hold no backslash.
func plainName(name string) bool {
	if !utf8.ValidString(name) {
		return false
	}
	for i := range len(name) {
		if c := name[i]; c < ' ' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// fieldOffset is the offset of the field at index in t, when no pointer
// lies on the way to it.
func fieldOffset(t reflect.Type, index []int) (uintptr, bool) {
	var off uintptr
	for _, i := range index {
		if t.Kind() != reflect.Struct {
			return 0, false
		}
		f := t.Field(i)
		off += f.Offset
		t = f.Type
	}
	return off, true
}

// decode reads args into the struct at base, which must be zero, and
// reports whether it could; when it could not, the struct may hold some
// of the fields and must be cleared before anything else reads args into
// it.
func (p *flatPlan) decode(args string, base unsafe.Pointer) bool {
	// The usual arguments first: compact, the fields in order, each
	// field's `{"name":` or `,"name":` compared whole where it should be.
	var seen uint64
	i, k := 0, 0
	for ; k < len(p.fields); k++ {
		f := &p.fields[k]
		j := i + len(f.prefix)
		if j >= len(args) {
			break
		}
		if f.masks[0] != 0 && i+16 <= len(args) {
			if load8(args, i)&f.masks[0] != f.words[0] || load8(args, i+8)&f.masks[1] != f.words[1] {
				break
			}
		} else if args[i:j] != f.prefix {
			break
		}
		var ok bool
		if i, ok = f.decode(args, j, unsafe.Add(base, f.offset)); !ok {
			return false
		}
		seen |= 1 << k
	}
	// Then any JSON object, from where the usual form ended.
	if k == 0 {
		if i = space(args, 0); i == len(args) || args[i] != '{' {
			return false
		}
		if i = space(args, i+1); i < len(args) && args[i] == '}' {
			return p.end(args, i+1, seen, base)
		}
	} else {
		if i = space(args, i); i == len(args) {
			return false
		}
		if args[i] == '}' {
			return p.end(args, i+1, seen, base)
		}
		if args[i] != ',' {
			return false
		}
		i = space(args, i+1)
	}
	next := k // the field models usually send next: the one after the last
	for {
		// A name: its bytes as they are, as no field's name needs an
		// escape.
		if i == len(args) || args[i] != '"' {
			return false
		}
		start := i + 1
		k := -1
		if next < len(p.fields) {
			if name := p.fields[next].name; len(args)-start > len(name) && args[start+len(name)] == '"' && args[start:start+len(name)] == name {
				k, i = next, start+len(name)
			}
		}
		if k < 0 {
			if i = plainRun(args, start); i == len(args) || args[i] != '"' {
				return false
			}
			k = p.lookup(args[start:i])
		}
		bit := uint64(1) << (uint(k) & 63) // fields are at most 64
		if k < 0 || seen&bit != 0 {
			return false
		}
		next = k + 1
		seen |= bit
		if i = space(args, i+1); i == len(args) || args[i] != ':' {
			return false
		}
		if i = space(args, i+1); i == len(args) {
			return false
		}
		f := &p.fields[k]
		var ok bool
		if i, ok = f.decode(args, i, unsafe.Add(base, f.offset)); !ok {
			return false
		}
		if i = space(args, i); i == len(args) {
			return false
		}
		if args[i] == '}' {
			return p.end(args, i+1, seen, base)
		}
		if args[i] != ',' {
			return false
		}
		i = space(args, i+1)
	}
}

// end finishes decode after the object, at args[i:]: only whitespace may
// follow, every required field must have come, and the fields that did
// not get their defaults.
func (p *flatPlan) end(args string, i int, seen uint64, base unsafe.Pointer) bool {
	if space(args, i) != len(args) || p.required&^seen != 0 {
		return false
	}
	if missing := p.defaults &^ seen; missing != 0 {
		for k := range p.fields {
			if missing&(1<<k) != 0 {
				p.fields[k].storeAt(unsafe.Add(base, p.fields[k].offset), &p.fields[k].def)
			}
		}
	}
	return true
}

// lookup returns the index of the field called name, or -1.
func (p *flatPlan) lookup(name string) int {
	for k := range p.fields {
		if p.fields[k].name == name {
			return k
		}
	}
	return -1
}

// decode reads the value at args[i:] into the field at ptr and returns
// where the value ends.
func (f *flatField) decode(args string, i int, ptr unsafe.Pointer) (int, bool) {
	if args[i] == 'n' && !f.required {
		// Optional fields take null as absent.
		if len(args)-i < 4 || args[i:i+4] != "null" {
			return i, false
		}
		if f.def != (flatValue{}) {
			f.storeAt(ptr, &f.def)
		}
		return i + 4, true
	}
	switch f.kind {
	case reflect.String:
		s, end, ok := scanString(args, i)
		if !ok || f.checks != nil && f.checks.checkString(s) != nil {
			return i, false
		}
		*(*string)(ptr) = s
		return end, true
	case reflect.Bool:
		switch {
		case len(args)-i >= 4 && args[i:i+4] == "true":
			*(*bool)(ptr) = true
			return i + 4, true
		case len(args)-i >= 5 && args[i:i+5] == "false":
			return i + 5, true
		}
		return i, false
	}
	end, integer, ok := scanNumber(args, i)
	if !ok || end-i > maxNumberLen {
		return i, false
	}
	lit := args[i:end]
	switch f.kind {
	case reflect.Float32, reflect.Float64:
		v, ok := shortFloat(lit)
		if !ok {
			var err error
			if v, err = strconv.ParseFloat(lit, 64); err != nil {
				return i, false
			}
		}
		if f.kind == reflect.Float32 && overflowFloat32(v) || !f.checkNumber(lit, v, false) {
			return i, false
		}
		if f.kind == reflect.Float32 {
			*(*float32)(ptr) = float32(v)
		} else {
			*(*float64)(ptr) = v
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := smallUint(lit, integer)
		if !ok {
			var err error
			if n, err = parseUint(lit); err != nil {
				return i, false
			}
		}
		if bits := kindBits(f.kind); bits < 64 && n>>bits != 0 {
			return i, false
		}
		if f.checks != nil && !f.checkNumber(lit, float64(n), n < 1<<53) {
			return i, false
		}
		storeUint(ptr, f.kind, n)
	default: // the signed integers
		n, ok := smallInt(lit, integer)
		if !ok {
			var err error
			if n, err = parseInt(lit); err != nil {
				return i, false
			}
		}
		if bits := kindBits(f.kind); bits < 64 && (n < -1<<(bits-1) || n >= 1<<(bits-1)) {
			return i, false
		}
		if f.checks != nil && !f.checkNumber(lit, float64(n), n > -1<<53 && n < 1<<53) {
			return i, false
		}
		storeInt(ptr, f.kind, n)
	}
	return end, true
}

// clear zeroes the fields of the struct at base: all that decoding it,
// by either plan, writes, as both write only these fields.
func (p *flatPlan) clear(base unsafe.Pointer) {
	for k := range p.fields {
		f := &p.fields[k]
		ptr := unsafe.Add(base, f.offset)
		switch f.size {
		case 16: // a string, whose pointer is cleared with its write barrier
			*(*string)(ptr) = ""
		case 8:
			*(*uint64)(ptr) = 0
		case 4:
			*(*uint32)(ptr) = 0
		case 2:
			*(*uint16)(ptr) = 0
		default:
			*(*uint8)(ptr) = 0
		}
	}
}

// storeAt writes the default v at ptr, as the field's kind takes it.
func (f *flatField) storeAt(ptr unsafe.Pointer, v *flatValue) {
	switch f.kind {
	case reflect.String:
		*(*string)(ptr) = v.s
	case reflect.Bool:
		*(*bool)(ptr) = v.b
	case reflect.Float32:
		*(*float32)(ptr) = float32(v.f)
	case reflect.Float64:
		*(*float64)(ptr) = v.f
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		storeUint(ptr, f.kind, v.u)
	default:
		storeInt(ptr, f.kind, v.i)
	}
}

// storeInt writes n at ptr as an integer of kind k, signed or not.
func storeInt(ptr unsafe.Pointer, k reflect.Kind, n int64) {
	switch k {
	case reflect.Int8, reflect.Uint8:
		*(*int8)(ptr) = int8(n)
	case reflect.Int16, reflect.Uint16:
		*(*int16)(ptr) = int16(n)
	case reflect.Int32, reflect.Uint32:
		*(*int32)(ptr) = int32(n)
	case reflect.Int, reflect.Uint:
		*(*int)(ptr) = int(n)
	default:
		*(*int64)(ptr) = n
	}
}

// storeUint writes n at ptr as an unsigned integer of kind k.
func storeUint(ptr unsafe.Pointer, k reflect.Kind, n uint64) { storeInt(ptr, k, int64(n)) }

// kindBits is the size in bits of an integer kind.
func kindBits(k reflect.Kind) uint {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	case reflect.Int, reflect.Uint:
		return strconv.IntSize
	}
	return 64
}
