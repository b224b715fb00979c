package onion

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

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
