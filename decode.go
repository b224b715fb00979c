package onion

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// The arguments of every call are decoded by a plan built once per tool
// from the Go type and the compiled JSON Schema the validator uses. The
// plan reads the model's JSON with jsontext's tokenizer straight into the
// Go value and applies, on the way, the very checks the validator would
// (the same format functions, the same regexp engine): types, required
// and unknown fields, enums, bounds, lengths, patterns, formats, item
// counts. A schema keyword the plan does not apply itself makes every call
// go through the validator as well, so no keyword is ever skipped. The
// validator also explains rejected arguments.

// Limits on hostile arguments, applied before anything recurses.
const (
	// maxDepth bounds how deeply arguments nest.
	maxDepth = 100
	// maxNumberLen bounds the text of one number: no parameter needs
	// more, and longer ones would cost the validator's big.Rat
	// arithmetic quadratic time.
	maxNumberLen = 100
)

// The Go types that travel differently from their kind.
var (
	durationType     = reflect.TypeFor[time.Duration]()   // "90s"
	timeType         = reflect.TypeFor[time.Time]()       // RFC 3339
	rawMessageType   = reflect.TypeFor[json.RawMessage]() // any JSON
	customSchemaType = reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }]()
)

// objectPlan decodes a JSON object into a struct.
type objectPlan struct {
	typ          reflect.Type
	fields       []fieldPlan
	byName       map[string]int
	allowUnknown bool // the schema does not forbid other properties
	// escapedNames is set when a field's name holds a backslash, so that
	// a name as it is in the arguments may match it and yet mean another.
	escapedNames bool
	// flat reads the arguments of a flat object of scalars without
	// jsontext (flatdecode.go); nil for other objects and nested ones.
	flat *flatPlan
}

type fieldPlan struct {
	name     string
	index    []int
	required bool // optional fields take null as absent
	def      reflect.Value
	dec      decodeFunc
}

// decodeFunc decodes the next JSON value of r into the settable v.
type decodeFunc func(r *argReader, v reflect.Value) error

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name      string
	index     []int
	typ       reflect.Type
	omitempty bool
	tagged    bool
}

// jsonFields lists the fields of struct type t the way encoding/json does:
// json tag names, "-" skipped, unexported skipped, embedded structs
// flattened with the shallowest (then tagged) field winning a name.
func jsonFields(t reflect.Type) []jsonField {
	type entry struct {
		f     jsonField
		depth int
	}
	var all []entry
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					walk(et, idx, depth+1)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			f := jsonField{name: name, index: idx, typ: ft, tagged: name != ""}
			if f.name == "" {
				f.name = sf.Name
			}
			f.omitempty = strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			all = append(all, entry{f, depth})
		}
	}
	walk(t, nil, 0)
	var out []jsonField
	for i, e := range all {
		keep := true
		for j, o := range all {
			if i == j || o.f.name != e.f.name {
				continue
			}
			if o.depth < e.depth || o.depth == e.depth && (o.f.tagged && !e.f.tagged || o.f.tagged == e.f.tagged) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, e.f)
		}
	}
	return out
}

// planner builds the plan of one tool; unchecked records that the schema
// holds something the plan does not check itself.
type planner struct{ unchecked bool }

// newPlan builds the plan of struct type t. s is the derived schema (for
// defaults, which strict schemas do not carry), cs the compiled schema the
// checks follow.
func newPlan(t reflect.Type, s *jsonschema.Schema, cs *santhosh.Schema) (*objectPlan, bool, error) {
	var pl planner
	p, err := pl.object(t, s, cs)
	if err != nil {
		return nil, false, err
	}
	p.flat = newFlatPlan(t, p, cs, jsonFields(t))
	return p, pl.unchecked, nil
}

func (pl *planner) object(t reflect.Type, s *jsonschema.Schema, cs *santhosh.Schema) (*objectPlan, error) {
	p := &objectPlan{typ: t, byName: map[string]int{}}
	pl.keywords(cs, "object", propertyKeywords)
	switch ap := cs.AdditionalProperties.(type) {
	case bool:
		p.allowUnknown = ap
	case nil:
		p.allowUnknown = true
	default:
		pl.unchecked = true
		p.allowUnknown = true
	}
	fields := jsonFields(t)
	for name := range cs.Properties {
		if !slices.ContainsFunc(fields, func(f jsonField) bool { return f.name == name }) {
			pl.unchecked = true // a property no Go field takes
		}
	}
	for _, f := range fields {
		prop, ok := cs.Properties[f.name]
		if !ok {
			continue
		}
		required := slices.Contains(cs.Required, f.name)
		if inner, ok := nullable(prop); ok {
			// The strict form of an optional field: null or the value.
			prop, required = inner, false
		}
		var ps *jsonschema.Schema
		if s != nil && s.Properties != nil {
			ps, _ = s.Properties.Get(f.name)
		}
		dec, err := pl.value(f.typ, ps, prop)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
		fp := fieldPlan{name: f.name, index: f.index, dec: dec, required: required}
		if ps != nil && ps.Default != nil {
			def := reflect.New(f.typ)
			raw, _ := json.Marshal(ps.Default)
			if err := json.Unmarshal(raw, def.Interface()); err != nil {
				// invopop keeps tag defaults as strings: try the literal.
				if s, ok := ps.Default.(string); !ok || json.Unmarshal([]byte(s), def.Interface()) != nil {
					return nil, fmt.Errorf("field %s: default %v does not fit %s", f.name, ps.Default, f.typ)
				}
			}
			fp.def = def.Elem()
		}
		p.byName[f.name] = len(p.fields)
		p.escapedNames = p.escapedNames || strings.Contains(f.name, `\\`)
		p.fields = append(p.fields, fp)
	}
	for _, r := range cs.Required {
		if _, ok := p.byName[r]; !ok {
			pl.unchecked = true // required, but no Go field takes it
		}
	}
	return p, nil
}

// nullable reports whether cs is strict mode's "anyOf: [schema, null]" and
// returns the schema.
func nullable(cs *santhosh.Schema) (*santhosh.Schema, bool) {
	if len(cs.AnyOf) != 2 || cs.Types != nil || cs.Enum != nil || cs.Ref != nil || len(cs.AllOf) > 0 || len(cs.OneOf) > 0 {
		return cs, false
	}
	null := cs.AnyOf[1]
	if null.Types == nil || null.Types.ToStrings()[0] != "null" || len(null.Types.ToStrings()) != 1 {
		return cs, false
	}
	return cs.AnyOf[0], true
}

// The keywords the plan applies, by the JSON type they apply to.
const (
	stringKeywords   = 1 << iota // enum, format, pattern, lengths
	numberKeywords               // enum, bounds
	arrayKeywords                // items, item counts
	propertyKeywords             // properties, required, additionalProperties
)

// keywords marks the plan unchecked when cs holds a keyword other than the
// ones the decoder for want applies, or types other than want.
func (pl *planner) keywords(cs *santhosh.Schema, want string, applied int) {
	if cs.Bool != nil {
		if !*cs.Bool {
			pl.unchecked = true
		}
		return
	}
	if cs.Types == nil || !slices.Equal(cs.Types.ToStrings(), []string{want}) && (want != "number" || !slices.Equal(cs.Types.ToStrings(), []string{"integer"})) {
		pl.unchecked = true
	}
	if cs.Ref != nil || cs.RecursiveRef != nil || cs.DynamicRef != nil || cs.Const != nil || cs.Not != nil ||
		len(cs.AllOf) > 0 || len(cs.AnyOf) > 0 || len(cs.OneOf) > 0 || cs.If != nil || cs.Then != nil || cs.Else != nil ||
		len(cs.Extensions) > 0 || cs.ContentEncoding != nil || cs.ContentMediaType != nil || cs.ContentSchema != nil {
		pl.unchecked = true
	}
	if applied&(stringKeywords|numberKeywords) == 0 && cs.Enum != nil {
		pl.unchecked = true
	}
	if applied&stringKeywords == 0 && (cs.Format != nil || cs.Pattern != nil || cs.MinLength != nil || cs.MaxLength != nil) {
		pl.unchecked = true
	}
	if applied&numberKeywords == 0 && (cs.Minimum != nil || cs.Maximum != nil || cs.ExclusiveMinimum != nil || cs.ExclusiveMaximum != nil) {
		pl.unchecked = true
	}
	if cs.MultipleOf != nil {
		pl.unchecked = true
	}
	if applied&arrayKeywords == 0 && (cs.Items != nil || cs.Items2020 != nil || cs.MinItems != nil || cs.MaxItems != nil) {
		pl.unchecked = true
	}
	if cs.UniqueItems || cs.Contains != nil || cs.MinContains != nil || cs.MaxContains != nil || cs.AdditionalItems != nil ||
		len(cs.PrefixItems) > 0 || cs.UnevaluatedItems != nil {
		pl.unchecked = true
	}
	if applied&propertyKeywords == 0 && (cs.Properties != nil || len(cs.Required) > 0 || cs.AdditionalProperties != nil) {
		pl.unchecked = true
	}
	if cs.MaxProperties != nil || cs.MinProperties != nil || cs.PropertyNames != nil || len(cs.PatternProperties) > 0 ||
		len(cs.Dependencies) > 0 || len(cs.DependentRequired) > 0 || len(cs.DependentSchemas) > 0 || cs.UnevaluatedProperties != nil {
		pl.unchecked = true
	}
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// unconstrained reports whether cs accepts every JSON value: it holds no
// assertion, only annotations.
func unconstrained(cs *santhosh.Schema) bool {
	if cs == nil || cs.Bool != nil && *cs.Bool {
		return true
	}
	return cs.Bool == nil && cs.Ref == nil && cs.RecursiveRef == nil && cs.DynamicRef == nil && cs.Types == nil &&
		cs.Enum == nil && cs.Const == nil && cs.Not == nil && len(cs.AllOf) == 0 && len(cs.AnyOf) == 0 && len(cs.OneOf) == 0 &&
		cs.If == nil && cs.Then == nil && cs.Else == nil && cs.Format == nil &&
		cs.MaxProperties == nil && cs.MinProperties == nil && len(cs.Required) == 0 && cs.PropertyNames == nil &&
		len(cs.Properties) == 0 && len(cs.PatternProperties) == 0 && cs.AdditionalProperties == nil &&
		len(cs.Dependencies) == 0 && len(cs.DependentRequired) == 0 && len(cs.DependentSchemas) == 0 && cs.UnevaluatedProperties == nil &&
		cs.MinItems == nil && cs.MaxItems == nil && !cs.UniqueItems && cs.Contains == nil && cs.MinContains == nil && cs.MaxContains == nil &&
		cs.Items == nil && cs.AdditionalItems == nil && len(cs.PrefixItems) == 0 && cs.Items2020 == nil && cs.UnevaluatedItems == nil &&
		cs.MinLength == nil && cs.MaxLength == nil && cs.Pattern == nil &&
		cs.ContentEncoding == nil && cs.ContentMediaType == nil && cs.ContentSchema == nil &&
		cs.Maximum == nil && cs.Minimum == nil && cs.ExclusiveMaximum == nil && cs.ExclusiveMinimum == nil && cs.MultipleOf == nil &&
		len(cs.Extensions) == 0
}

// value builds the decoder of one value of type t; s is its derived
// schema (may be nil), cs its compiled one.
func (pl *planner) value(t reflect.Type, s *jsonschema.Schema, cs *santhosh.Schema) (decodeFunc, error) {
	if cs == nil {
		cs = &santhosh.Schema{}
	}
	switch {
	case t.Kind() == reflect.Pointer:
		inner, null := cs, false
		if cs.Types != nil && slices.Contains(cs.Types.ToStrings(), "null") {
			// A schema that says null itself: let the element's
			// decoder see the rest.
			pl.unchecked = true
			null = true
		}
		elem, err := pl.value(t.Elem(), s, inner)
		if err != nil {
			return nil, err
		}
		return func(r *argReader, v reflect.Value) error {
			if null && r.null() {
				v.SetZero()
				return nil
			}
			if v.IsNil() {
				v.Set(reflect.New(t.Elem()))
			}
			return elem(r, v.Elem())
		}, nil
	case reflect.PointerTo(t).Implements(customSchemaType) || t.Implements(customSchemaType),
		t.Kind() != reflect.Interface && (reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)) && t != timeType:
		return pl.fallback(cs), nil
	}
	c, err := newChecks(cs)
	if err != nil {
		return nil, err
	}
	switch t.Kind() {
	case reflect.String:
		pl.keywords(cs, "string", stringKeywords)
		if t == reflect.TypeFor[json.Number]() {
			pl.unchecked = true
			return decodeFallback, nil // a number, as encoding/json
		}
		return func(r *argReader, v reflect.Value) error {
			str, err := r.str()
			if err != nil {
				return err
			}
			if err := c.checkString(str); err != nil {
				return err
			}
			v.SetString(str)
			return nil
		}, nil
	case reflect.Bool:
		pl.keywords(cs, "boolean", 0)
		return func(r *argReader, v reflect.Value) error {
			b, err := r.boolean()
			if err != nil {
				return err
			}
			v.SetBool(b)
			return nil
		}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if t == durationType {
			pl.keywords(cs, "string", stringKeywords)
			return func(r *argReader, v reflect.Value) error {
				str, err := r.str()
				if err != nil {
					return err
				}
				d, perr := time.ParseDuration(str)
				if err := c.checkString(str); err != nil || perr != nil {
					return fmt.Errorf("expected %s, got %s", durationHint, quoteValue(str))
				}
				v.SetInt(int64(d))
				return nil
			}, nil
		}
		pl.keywords(cs, "integer", numberKeywords)
		return func(r *argReader, v reflect.Value) error {
			lit, err := r.number("integer")
			if err != nil {
				return err
			}
			n, err := parseInt(lit)
			if err != nil {
				return err
			}
			if v.OverflowInt(n) {
				return fmt.Errorf("expected integer fitting %s, got %s", v.Type(), lit)
			}
			if err := c.checkInt(n, lit); err != nil {
				return err
			}
			v.SetInt(n)
			return nil
		}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		pl.keywords(cs, "integer", numberKeywords)
		return func(r *argReader, v reflect.Value) error {
			lit, err := r.number("integer")
			if err != nil {
				return err
			}
			n, err := parseUint(lit)
			if err != nil {
				return err
			}
			if v.OverflowUint(n) {
				return fmt.Errorf("expected integer from 0 fitting %s, got %s", v.Type(), lit)
			}
			if err := c.checkNumber(lit); err != nil {
				return err
			}
			v.SetUint(n)
			return nil
		}, nil
	case reflect.Float32, reflect.Float64:
		pl.keywords(cs, "number", numberKeywords)
		return func(r *argReader, v reflect.Value) error {
			lit, err := r.number("number")
			if err != nil {
				return err
			}
			f, err := strconv.ParseFloat(lit, 64)
			if err != nil || v.OverflowFloat(f) {
				return fmt.Errorf("expected number fitting %s, got %s", v.Type(), lit)
			}
			if err := c.checkNumber(lit); err != nil {
				return err
			}
			v.SetFloat(f)
			return nil
		}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return pl.fallback(cs), nil // base64, as encoding/json
		}
		pl.keywords(cs, "array", arrayKeywords)
		items := cs.Items2020
		if it, ok := cs.Items.(*santhosh.Schema); ok {
			items = it
		} else if cs.Items != nil {
			pl.unchecked = true
		}
		var is *jsonschema.Schema
		if s != nil {
			is = s.Items
		}
		elem, err := pl.value(t.Elem(), is, items)
		if err != nil {
			return nil, err
		}
		return func(r *argReader, v reflect.Value) error {
			if !r.open('[') {
				return r.typeErr("array")
			}
			v.Set(reflect.MakeSlice(t, 0, 0))
			for n := 0; ; n++ {
				if r.close(']') {
					return c.checkItems(n)
				}
				v.Grow(1)
				v.SetLen(n + 1)
				if err := elem(r, v.Index(n)); err != nil {
					return &pathError{index: n, err: err}
				}
			}
		}, nil
	case reflect.Struct:
		if t == timeType {
			pl.keywords(cs, "string", stringKeywords)
			return func(r *argReader, v reflect.Value) error {
				str, err := r.str()
				if err != nil {
					return err
				}
				if err := c.checkString(str); err != nil {
					return err
				}
				tm, err := time.Parse(time.RFC3339Nano, str)
				if err != nil {
					return fmt.Errorf("expected %s, got %s", formatHints["date-time"], quoteValue(str))
				}
				v.Set(reflect.ValueOf(tm))
				return nil
			}, nil
		}
		sub, err := pl.object(t, s, cs)
		if err != nil {
			return nil, err
		}
		return sub.decode, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String || reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
			return pl.fallback(cs), nil
		}
		pl.keywords(cs, "object", propertyKeywords)
		elemSchema, _ := cs.AdditionalProperties.(*santhosh.Schema)
		if len(cs.Properties) > 0 || len(cs.Required) > 0 || cs.AdditionalProperties == false {
			pl.unchecked = true
		}
		var es *jsonschema.Schema
		if s != nil && s.AdditionalProperties != jsonschema.TrueSchema && s.AdditionalProperties != jsonschema.FalseSchema {
			es = s.AdditionalProperties
		}
		elem, err := pl.value(t.Elem(), es, elemSchema)
		if err != nil {
			return nil, err
		}
		return func(r *argReader, v reflect.Value) error {
			if !r.open('{') {
				return r.typeErr("object")
			}
			v.Set(reflect.MakeMap(t))
			for !r.close('}') {
				key, err := r.name()
				if err != nil {
					return err
				}
				e := reflect.New(t.Elem()).Elem()
				if err := elem(r, e); err != nil {
					return &pathError{field: key, err: err}
				}
				v.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), e)
			}
			return r.err
		}, nil
	default: // arrays, interfaces
		return pl.fallback(cs), nil
	}
}

// fallback is the decoder of a value encoding/json decodes; the validator
// checks it unless its schema accepts every value.
func (pl *planner) fallback(cs *santhosh.Schema) decodeFunc {
	if !unconstrained(cs) {
		pl.unchecked = true
	}
	return decodeFallback
}

// decode reads an object into the struct v.
func (p *objectPlan) decode(r *argReader, v reflect.Value) error {
	if !r.open('{') {
		return r.typeErr("object")
	}
	var seenSmall uint64
	var seenBig []bool
	if len(p.fields) > 64 {
		seenBig = make([]bool, len(p.fields))
	}
	for {
		quoted, end, err := r.nextKey()
		if err != nil {
			return err
		}
		if end {
			break
		}
		// A name as it is in the arguments is its text unless it holds a
		// backslash, which no field's name does when it matches.
		key := quoted[1 : len(quoted)-1]
		i, ok := p.lookup(key)
		if (!ok || p.escapedNames) && bytes.IndexByte(key, '\\') >= 0 {
			key = unquote(quoted)
			i, ok = p.lookup(key)
		}
		if !ok {
			if p.allowUnknown {
				if _, err := r.raw(); err != nil {
					return err
				}
				continue
			}
			return &pathError{field: string(key), err: errUnknownField}
		}
		f := &p.fields[i]
		if seenBig != nil && seenBig[i] || seenBig == nil && seenSmall&(1<<i) != 0 {
			return &pathError{field: f.name, err: errTwice}
		}
		if seenBig != nil {
			seenBig[i] = true
		} else {
			seenSmall |= 1 << i
		}
		if !f.required && r.null() {
			if f.def.IsValid() {
				fieldByIndex(v, f.index).Set(f.def)
			}
			continue
		}
		if err := f.dec(r, fieldByIndex(v, f.index)); err != nil {
			return &pathError{field: f.name, err: err}
		}
	}
	for i := range p.fields {
		f := &p.fields[i]
		seen := seenBig != nil && seenBig[i] || seenBig == nil && seenSmall&(1<<i) != 0
		if seen {
			continue
		}
		if f.required {
			return &pathError{field: f.name, err: errMissing}
		}
		if f.def.IsValid() {
			fieldByIndex(v, f.index).Set(f.def)
		}
	}
	return nil
}

func (p *objectPlan) lookup(key []byte) (int, bool) {
	if len(p.fields) <= 8 {
		for i := range p.fields {
			if p.fields[i].name == string(key) {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := p.byName[string(key)]
	return i, ok
}

// fieldByIndex is v.FieldByIndex, allocating nil embedded pointers.
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	if len(index) == 1 {
		return v.Field(index[0])
	}
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

var (
	errUnknownField = errors.New("unknown field")
	errMissing      = errors.New("required field is missing")
	errTwice        = errors.New("field given twice")
)

// pathError places an error at a field or array index.
type pathError struct {
	field string
	index int
	err   error
}

func (e *pathError) Error() string {
	var parts []string
	var err error = e
	for {
		pe, ok := err.(*pathError)
		if !ok {
			break
		}
		if pe.field != "" {
			parts = append(parts, "."+pe.field)
		} else {
			parts = append(parts, "["+strconv.Itoa(pe.index)+"]")
		}
		err = pe.err
	}
	path := strings.TrimPrefix(strings.Join(parts, ""), ".")
	return path + ": " + err.Error()
}

func (e *pathError) Unwrap() error { return e.err }

// decodeFallback hands one value to encoding/json: arrays, any, maps with
// keys of their own, and types with their own UnmarshalJSON. Its depth and numbers are bounded
// first.
func decodeFallback(r *argReader, v reflect.Value) error {
	raw, err := r.raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("expected %s, got %s", te.Type, te.Value)
		}
		return err
	}
	return nil
}

// checks are the value keywords of one compiled schema, applied with the
// validator's own functions.
type checks struct {
	enum               []any
	format             *santhosh.Format
	pattern            santhosh.Regexp
	minLen, maxLen     int
	bounds             []bound
	numEnum            []bound // the enum's numbers, ok meaning equal
	minItems, maxItems int
}

// bound is one of minimum, maximum, exclusiveMinimum, exclusiveMaximum:
// a value compared with it must give a result in ok.
type bound struct {
	rat   *big.Rat
	f     float64
	exact bool // f is rat
	ok    func(cmp int) bool
	op    string
}

func newChecks(cs *santhosh.Schema) (*checks, error) {
	c := &checks{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, format: cs.Format, pattern: cs.Pattern}
	if cs.Enum != nil {
		c.enum = cs.Enum.Values
		for _, e := range c.enum {
			if n, ok := e.(json.Number); ok {
				if r, ok := new(big.Rat).SetString(string(n)); ok {
					f, exact := r.Float64()
					c.numEnum = append(c.numEnum, bound{rat: r, f: f, exact: exact, ok: func(c int) bool { return c == 0 }})
				}
			}
		}
	}
	for _, b := range []struct {
		rat *big.Rat
		op  string
		ok  func(int) bool
	}{
		{cs.Minimum, ">=", func(c int) bool { return c >= 0 }},
		{cs.Maximum, "<=", func(c int) bool { return c <= 0 }},
		{cs.ExclusiveMinimum, ">", func(c int) bool { return c > 0 }},
		{cs.ExclusiveMaximum, "<", func(c int) bool { return c < 0 }},
	} {
		if b.rat != nil {
			f, exact := b.rat.Float64()
			c.bounds = append(c.bounds, bound{rat: b.rat, f: f, exact: exact, ok: b.ok, op: b.op})
		}
	}
	for _, p := range []struct {
		dst *int
		src *int
	}{{&c.minLen, cs.MinLength}, {&c.maxLen, cs.MaxLength}, {&c.minItems, cs.MinItems}, {&c.maxItems, cs.MaxItems}} {
		if p.src != nil {
			*p.dst = *p.src
		}
	}
	return c, nil
}

func (c *checks) checkString(s string) error {
	if c.enum != nil && !slices.ContainsFunc(c.enum, func(e any) bool { es, ok := e.(string); return ok && es == s }) {
		return fmt.Errorf("expected one of %s, got %s", enumList(c.enum), quoteValue(s))
	}
	if c.minLen >= 0 || c.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if c.minLen >= 0 && n < c.minLen {
			return fmt.Errorf("expected at least %d characters, got %d", c.minLen, n)
		}
		if c.maxLen >= 0 && n > c.maxLen {
			return fmt.Errorf("expected at most %d characters, got %d", c.maxLen, n)
		}
	}
	if c.pattern != nil && !c.pattern.MatchString(s) {
		if c.pattern.String() == durationPattern {
			return fmt.Errorf("expected %s, got %s", durationHint, quoteValue(s))
		}
		return fmt.Errorf("expected a string matching %s, got %s", quoteValue(c.pattern.String()), quoteValue(s))
	}
	if c.format != nil && c.format.Validate(s) != nil {
		return fmt.Errorf("expected %s, got %s", formatHint(c.format.Name), quoteValue(s))
	}
	return nil
}

// checkNumber applies enum and bounds to the number literal lit, exactly:
// in float64 where that is exact, with big.Rat otherwise.
func (c *checks) checkNumber(lit string) error {
	if c.enum == nil && c.bounds == nil {
		return nil
	}
	i, err := strconv.ParseInt(lit, 10, 64)
	return c.checkExact(lit, float64(i), err == nil && i > -1<<53 && i < 1<<53)
}

// checkInt is checkNumber for lit, already parsed into n.
func (c *checks) checkInt(n int64, lit string) error {
	if c.enum == nil && c.bounds == nil {
		return nil
	}
	return c.checkExact(lit, float64(n), n > -1<<53 && n < 1<<53)
}

// checkExact is checkNumber for lit, whose value is f when exact.
func (c *checks) checkExact(lit string, f float64, exact bool) error {
	var n *big.Rat
	cmp := func(rat *big.Rat, bf float64, bexact bool) int {
		if exact && bexact {
			switch {
			case f < bf:
				return -1
			case f > bf:
				return 1
			}
			return 0
		}
		if n == nil {
			n, _ = new(big.Rat).SetString(lit) // lit is short: see maxNumberLen
		}
		return n.Cmp(rat)
	}
	if c.enum != nil && !slices.ContainsFunc(c.numEnum, func(b bound) bool { return cmp(b.rat, b.f, b.exact) == 0 }) {
		return fmt.Errorf("expected one of %s, got %s", enumList(c.enum), lit)
	}
	for _, b := range c.bounds {
		if !b.ok(cmp(b.rat, b.f, b.exact)) {
			return fmt.Errorf("expected a number %s %s, got %s", b.op, b.rat.RatString(), lit)
		}
	}
	return nil
}

func (c *checks) checkItems(n int) error {
	if c.minItems >= 0 && n < c.minItems {
		return fmt.Errorf("expected at least %d items, got %d", c.minItems, n)
	}
	if c.maxItems >= 0 && n > c.maxItems {
		return fmt.Errorf("expected at most %d items, got %d", c.maxItems, n)
	}
	return nil
}

// parseInt reads a number literal that JSON Schema counts as an integer
// (5, but also 5.0 and 5e2, as the validator does) into an int64.
func parseInt(lit string) (int64, error) {
	if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return i, nil
	}
	n, err := parseBigInt(lit)
	if err != nil {
		return 0, err
	}
	if !n.IsInt64() {
		return 0, fmt.Errorf("expected integer fitting int64, got %s", lit)
	}
	return n.Int64(), nil
}

// parseUint is parseInt for a uint64.
func parseUint(lit string) (uint64, error) {
	if i, err := strconv.ParseUint(lit, 10, 64); err == nil {
		return i, nil
	}
	n, err := parseBigInt(lit)
	if err != nil {
		return 0, err
	}
	if n.Sign() < 0 || !n.IsUint64() {
		return 0, fmt.Errorf("expected integer from 0 fitting uint64, got %s", lit)
	}
	return n.Uint64(), nil
}

func parseBigInt(lit string) (*big.Int, error) {
	r, ok := new(big.Rat).SetString(lit) // lit is short: see maxNumberLen
	if !ok || !r.IsInt() {
		return nil, fmt.Errorf("expected integer, got number %s", lit)
	}
	return r.Num(), nil
}

// formatHints say, for the model, what a string of a format looks like.
var formatHints = map[string]string{
	"date-time":     "an RFC 3339 date-time such as 2026-01-02T15:04:05Z",
	"date":          "an RFC 3339 date such as 2026-01-02",
	"time":          "an RFC 3339 time such as 15:04:05Z",
	"duration":      "an ISO 8601 duration such as P1DT2H",
	"email":         "an email address such as ada@example.com",
	"hostname":      "a host name such as example.com",
	"ipv4":          "an IPv4 address such as 192.0.2.1",
	"ipv6":          "an IPv6 address such as 2001:db8::1",
	"uri":           "an absolute URI such as https://example.com/page",
	"uri-reference": "a URI reference such as /page or https://example.com/page",
	"uuid":          "a UUID such as 123e4567-e89b-12d3-a456-426614174000",
}

func formatHint(name string) string {
	if h, ok := formatHints[name]; ok {
		return h
	}
	return "a string of format " + quoteValue(name)
}

// quoteValue quotes a string value as JSON does, the one style every
// message uses.
func quoteValue(s string) string {
	b, _ := json.Marshal(s)
	return truncate(string(b), 80)
}

func enumList(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		b, _ := json.Marshal(v)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// argReader reads a model's arguments with jsontext's tokenizer, depth and
// number length bounded.
type argReader struct {
	dec  *jsontext.Decoder
	buf  bytes.Buffer // the arguments' own bytes: see newArgReader
	args string
	err  error // the first syntax or limit error
}

var argReaders = sync.Pool{New: func() any {
	r := &argReader{}
	r.dec = jsontext.NewDecoder(&r.buf)
	return r
}}

// readerOptions read invalid UTF-8 as encoding/json does (each bad byte
// becomes U+FFFD) and leave repeated names to the plan, which refuses them
// for a struct's fields; inside a free-form value the last one wins, as
// in encoding/json and the validator.
var readerOptions = []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}

// newArgReader reads args in place. A jsontext.Decoder reads a
// bytes.Buffer's contents where they are, without copying them into a
// buffer of its own, and never writes to them (jsontext's decodeBuffer
// leaves a bytes.Buffer's bytes alone), so the string's bytes serve as
// they are: tokenizing the 56 bytes of a 4-field call took about 230 ns
// so against about 330 ns through a strings.Reader.
func newArgReader(args string) *argReader {
	r := argReaders.Get().(*argReader)
	r.buf = *bytes.NewBuffer(unsafe.Slice(unsafe.StringData(args), len(args)))
	r.dec.Reset(&r.buf, readerOptions...)
	r.args, r.err = args, nil
	return r
}

func (r *argReader) release() {
	if len(r.args) <= 64<<10 {
		r.buf = bytes.Buffer{}
		r.args = ""
		argReaders.Put(r)
	}
}

// syntaxError is JSON that is not JSON, or that passes a limit.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return argsNotJSON + e.msg }

// argsNotJSON begins the problem of arguments that do not parse; an
// answer's problem says "the answer" instead (problemsOf).
const argsNotJSON = "arguments are not valid JSON: "

// limitError is arguments past a bound on depth or number length.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

var (
	errTooDeep = &limitError{fmt.Sprintf("arguments nest deeper than %d levels", maxDepth)}
	errLongNum = &limitError{fmt.Sprintf("a number in the arguments is longer than %d characters", maxNumberLen)}
)

func (r *argReader) fail(err error) error {
	var le *limitError
	if !errors.As(err, &le) {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			err = &syntaxError{msg: strings.TrimPrefix(se.Error(), "jsontext: ")}
		} else {
			err = &syntaxError{msg: err.Error()}
		}
	}
	if r.err == nil {
		r.err = err
	}
	return err
}

// peek returns the kind of the next token, or 0 at an error.
func (r *argReader) peek() jsontext.Kind {
	if r.err != nil {
		return 0
	}
	return r.dec.PeekKind()
}

func (r *argReader) open(delim jsontext.Kind) bool {
	if r.peek() != delim {
		return false
	}
	if _, err := r.dec.ReadToken(); err != nil {
		r.fail(err)
		return false
	}
	if r.dec.StackDepth() > maxDepth {
		r.fail(errTooDeep)
		return false
	}
	return true
}

func (r *argReader) close(delim jsontext.Kind) bool {
	if r.peek() != delim {
		return false
	}
	if _, err := r.dec.ReadToken(); err != nil {
		r.fail(err)
		return false
	}
	return true
}

func (r *argReader) null() bool {
	if r.peek() != 'n' {
		return false
	}
	if _, err := r.dec.ReadToken(); err != nil {
		r.fail(err)
		return false
	}
	return true
}

func (r *argReader) boolean() (bool, error) {
	v, err := r.read()
	if err != nil {
		return false, err
	}
	if k := v.Kind(); k != 't' && k != 'f' {
		return false, typeErrOf("boolean", v)
	}
	return v.Kind() == 't', nil
}

// read reads the next value whole, of any kind. The scalar readers read
// their value with it and look at its kind afterwards rather than peeking
// first: each PeekKind costs a pass over the whitespace and the state, and
// a value of the wrong kind fails the call anyway. A composite value read
// this way is only a type error; jsontext reads it without recursion, and
// explain holds the arguments to the bounds before anything else.
func (r *argReader) read() (jsontext.Value, error) {
	if r.err != nil {
		return nil, r.err
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, r.fail(err)
	}
	return v, nil
}

// nextKey reads the next object name, quoted as it is in the arguments, or
// the end of the object (end true): one peek for both. The name's bytes
// are valid until the next read. Invalid UTF-8 in a name matches no
// field's name, as the U+FFFD that encoding/json would put in its place
// would not either.
func (r *argReader) nextKey() (quoted jsontext.Value, end bool, err error) {
	switch r.peek() {
	case '}':
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, false, r.fail(err)
		}
		return nil, true, nil
	case '"':
	default:
		return nil, false, r.failNext()
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, false, r.fail(err)
	}
	return v, false, nil
}

// name reads an object name as a string, as encoding/json would.
func (r *argReader) name() (string, error) {
	if r.peek() != '"' {
		return "", r.failNext()
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return "", r.fail(err)
	}
	return string(unquote(v)), nil
}

// str reads a string value.
func (r *argReader) str() (string, error) {
	v, err := r.read()
	if err != nil {
		return "", err
	}
	if v.Kind() != '"' {
		return "", typeErrOf("string", v)
	}
	// The text as it is in the arguments, with no copy, unless it holds an
	// escape or invalid UTF-8: found in one pass over plain ASCII, eight
	// bytes at a time, which jsontext has already read.
	end := int(r.dec.InputOffset())
	q := r.args[end-len(v) : end]
	if i := plainRun(q, 1); i == len(q)-1 || q[i] >= utf8.RuneSelf && strings.IndexByte(q[i:len(q)-1], '\\') < 0 && utf8.ValidString(q[i:len(q)-1]) {
		return q[1 : len(q)-1], nil
	}
	return string(unquote(v)), nil
}

// unquote returns the text of the JSON string v, invalid UTF-8 replaced.
func unquote(v jsontext.Value) []byte {
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return s
	}
	out, _ := jsontext.AppendUnquote(nil, v) // each invalid byte becomes U+FFFD, as in encoding/json
	return out
}

// number reads a number literal.
func (r *argReader) number(want string) (string, error) {
	v, err := r.read()
	if err != nil {
		return "", err
	}
	if v.Kind() != '0' {
		return "", typeErrOf(want, v)
	}
	if len(v) > maxNumberLen {
		return "", r.fail(errLongNum)
	}
	// The literal as it is in the arguments: no copy.
	end := int(r.dec.InputOffset())
	return r.args[end-len(v) : end], nil
}

// raw reads one value of any kind and returns its text, checking its depth
// and numbers on the way without recursion.
func (r *argReader) raw() ([]byte, error) {
	if r.peek() == 0 {
		return nil, r.failNext()
	}
	base := r.dec.StackDepth()
	start := int(r.dec.InputOffset())
	for {
		switch r.dec.PeekKind() {
		case '{', '[':
			if _, err := r.dec.ReadToken(); err != nil {
				return nil, r.fail(err)
			}
			if r.dec.StackDepth() > maxDepth {
				return nil, r.fail(errTooDeep)
			}
		case '}', ']':
			if _, err := r.dec.ReadToken(); err != nil {
				return nil, r.fail(err)
			}
		default:
			v, err := r.dec.ReadValue()
			if err != nil {
				return nil, r.fail(err)
			}
			if v.Kind() == '0' && len(v) > maxNumberLen {
				return nil, r.fail(errLongNum)
			}
		}
		if r.dec.StackDepth() == base {
			raw := strings.TrimLeft(r.args[start:r.dec.InputOffset()], " \t\r\n,:")
			return []byte(raw), nil
		}
	}
}

// failNext records the error that stops the next read.
func (r *argReader) failNext() error {
	if r.err != nil {
		return r.err
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return r.fail(err)
	}
	return r.fail(errors.New("unexpected token"))
}

// typeErr says what came where want was expected.
func (r *argReader) typeErr(want string) error {
	switch r.peek() {
	case '"', '0':
		v, err := r.read()
		if err != nil {
			return err
		}
		return typeErrOf(want, v)
	case 0:
		return r.failNext()
	}
	return &typeError{want: want, got: kindName(r.peek())}
}

// typeErrOf says that v came where want was expected; of a composite
// value only its first byte is looked at.
func typeErrOf(want string, v jsontext.Value) error {
	got := kindName(v.Kind())
	switch v.Kind() {
	case '"':
		got += " " + quoteValue(string(unquote(v)))
	case '0':
		got += " " + truncate(string(v), 40)
	}
	return &typeError{want: want, got: got}
}

// kindName names the JSON type of a value of kind k.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	}
	return "null"
}

type typeError struct{ want, got string }

func (e *typeError) Error() string { return "expected " + e.want + ", got " + e.got }

// end checks that nothing follows the value.
func (r *argReader) end() error {
	if r.err != nil {
		return r.err
	}
	// What is left must be JSON whitespace: looked at directly, as a
	// ReadToken that meets the end costs more than the call's last field.
	if strings.Trim(r.args[r.dec.InputOffset():], " \t\r\n") != "" {
		return r.fail(errors.New("unexpected text after the arguments object"))
	}
	return nil
}

// checkShape reads args through, holding them to the bounds on depth and
// number length, before anything that recurses sees them.
func checkShape(args string) error {
	r := newArgReader(args)
	defer r.release()
	if _, err := r.raw(); err != nil {
		return err
	}
	return r.end()
}
