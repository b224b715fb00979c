package onion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/fatih/structtag"
	"github.com/invopop/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/onionkit/onion/internal/gosource"
)

// paramSchema is the parameters of a tool: the JSON Schema the model reads,
// its strict form, and the one checker every call goes through: the plan
// that decodes arguments into Go values while checking them, and the full
// validator, compiled from the same schema, which checks what the plan
// does not and explains rejected arguments.
type paramSchema struct {
	schema  *jsonschema.Schema
	json    []byte
	sent    []byte // what Definition sends outside strict mode; nil for json itself
	listing string // the parameters, for error messages
	*checker

	strictOnce sync.Once
	strictJSON []byte
	strictErr  error
}

// checker is what a call's arguments are held to. Descriptions do not
// change it, so copies of a paramSchema that differ only in them share it.
type checker struct {
	validator *santhosh.Schema
	plan      *objectPlan // nil for raw tools
	// fullCheck is set when the schema holds keywords the plan does not
	// check itself, so every call is also run through the validator.
	fullCheck bool
	// patterns bounds the schema's regexp2 patterns by a call's context:
	// every check holds it (see hold).
	patterns *patterns
}

var schemaCache sync.Map // reflect.Type → *paramSchema

// paramsFor returns the parameters of an argument struct type, derived
// once per type for the life of the process. hint is a source file of the
// tool, used to find the source of the types it mentions.
func paramsFor(t reflect.Type, hint string) (*paramSchema, error) {
	if p, ok := schemaCache.Load(t); ok {
		return p.(*paramSchema), nil
	}
	p, err := deriveParams(t, hint)
	if err != nil {
		return nil, err
	}
	actual, _ := schemaCache.LoadOrStore(t, p)
	return actual.(*paramSchema), nil
}

func deriveParams(t reflect.Type, hint string) (*paramSchema, error) {
	if err := checkType(t, "", map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	s := deriver{hint: hint}.reflect(t)
	s.Description, s.Title = "", ""
	if s.Properties == nil {
		s.Properties = jsonschema.NewProperties()
	}
	fixRequired(s, t)
	return newParamSchema(s, t)
}

func newParamSchema(s *jsonschema.Schema, t reflect.Type) (*paramSchema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	chk, err := newChecker(b, s, t)
	if err != nil {
		return nil, err
	}
	sent, err := sentForm(b)
	if err != nil {
		return nil, err
	}
	return &paramSchema{schema: s, json: b, sent: sent, listing: listParams(s), checker: chk}, nil
}

// newChecker compiles the schema b and, for a Go type t, builds its plan.
// Without t, b is a raw schema, compiled as it is.
func newChecker(b []byte, s *jsonschema.Schema, t reflect.Type) (*checker, error) {
	compile := compileSchema
	if t == nil {
		compile = compileRaw
	}
	ps := &patterns{}
	v, err := compile(b, ps)
	if err != nil {
		return nil, err
	}
	c := &checker{validator: v, fullCheck: true, patterns: ps}
	if t != nil {
		plan, unchecked, err := newPlan(t, s, v)
		if err != nil {
			return nil, err
		}
		c.plan, c.fullCheck = plan, unchecked
	}
	return c, nil
}

// compileSchema compiles a parameters schema for the validator, its
// patterns as ECMA-262 regular expressions, as JSON Schema defines them,
// those that need regexp2 bound by ps. A pattern that does not compile is
// an error: no check is ever dropped.
func compileSchema(b []byte, ps *patterns) (*santhosh.Schema, error) {
	return compileDraft(b, nil, ps)
}

// compileDraft compiles b under draft when it names none with $schema;
// with a nil draft, under 2020-12.
func compileDraft(b []byte, draft *santhosh.Draft, ps *patterns) (*santhosh.Schema, error) {
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	c := santhosh.NewCompiler()
	if draft != nil {
		c.DefaultDraft(draft)
	}
	c.AssertFormat()
	c.UseRegexpEngine(ps.compile)
	if err := c.AddResource("tool.json", doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	v, err := c.Compile("tool.json")
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return v, nil
}

// withDescriptions returns a copy of p whose top-level properties without a
// description take one from descs (a doc comment's parameter paragraph).
func (p *paramSchema) withDescriptions(descs map[string]string, t reflect.Type) (*paramSchema, error) {
	changed := false
	for pair := p.schema.Properties.Oldest(); pair != nil; pair = pair.Next() {
		if pair.Value.Description == "" && descs[pair.Key] != "" {
			changed = true
		}
	}
	if !changed {
		return p, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(p.json, &s); err != nil {
		return nil, fmt.Errorf("copy schema: %w", err)
	}
	for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
		if pair.Value.Description == "" && descs[pair.Key] != "" {
			pair.Value.Description = descs[pair.Key]
		}
	}
	b, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	sent, err := sentForm(b)
	if err != nil {
		return nil, err
	}
	return &paramSchema{schema: &s, json: b, sent: sent, listing: listParams(&s), checker: p.checker}, nil
}

// checkType refuses, with a message naming the field, what cannot travel as
// JSON arguments: channels, funcs, complex numbers, maps with non-string
// keys, recursive types, and malformed struct tags.
func checkType(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if t.Implements(customSchemaType) || reflect.PointerTo(t).Implements(customSchemaType) {
		return nil
	}
	switch t {
	case timeType, durationType, rawMessageType:
		return nil
	}
	where := func() string {
		if path == "" {
			return t.String()
		}
		return "field " + path + " (" + t.String() + ")"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkType(t.Elem(), path, seen)
	case reflect.Slice, reflect.Array:
		return checkType(t.Elem(), path+"[]", seen)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return fmt.Errorf("%s: map keys must be strings to be JSON object keys", where())
		}
		return checkType(t.Elem(), path+"{}", seen)
	case reflect.Struct:
		if seen[t] {
			return fmt.Errorf("%s: recursive types cannot be tool parameters", where())
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag != "" {
				if _, err := structtag.Parse(string(f.Tag)); err != nil {
					return fmt.Errorf("field %s of %s: malformed struct tag `%s`: %w", f.Name, t, f.Tag, err)
				}
			}
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("json") == "-" {
				continue
			}
			name := f.Name
			if path != "" {
				name = path + "." + f.Name
			}
			if err := checkType(f.Type, name, seen); err != nil {
				return err
			}
		}
		return nil
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer, reflect.Uintptr:
		return fmt.Errorf("%s: a %s cannot be a tool parameter", where(), t.Kind())
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return fmt.Errorf("%s: an interface with methods cannot be decoded from JSON; use a concrete type", where())
		}
	}
	return nil
}

// deriver holds what one derivation needs to read the source.
type deriver struct{ hint string }

// reflect derives the schema of t, inlined, without $schema and $id.
func (d deriver) reflect(t reflect.Type) *jsonschema.Schema {
	r := &jsonschema.Reflector{
		DoNotReference: true,
		Anonymous:      true,
		Mapper:         d.mapType,
		LookupComment:  d.lookupComment,
	}
	s := r.ReflectFromType(t)
	s.Version, s.ID = "", ""
	return s
}

// mapType gives the schema of the types the reflector does not know: Go
// durations, raw JSON, unsigned integers, and named types whose constants
// are declared in their package (enums).
func (d deriver) mapType(t reflect.Type) *jsonschema.Schema {
	switch t {
	case durationType:
		return &jsonschema.Schema{Type: "string", Description: durationDoc, Pattern: durationPattern}
	case rawMessageType:
		return &jsonschema.Schema{}
	}
	if t.Implements(customSchemaType) || reflect.PointerTo(t).Implements(customSchemaType) {
		return nil
	}
	var typ string
	switch t.Kind() {
	case reflect.String:
		typ = "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		typ = "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		typ = "integer"
	default:
		return nil
	}
	s := &jsonschema.Schema{Type: typ}
	if typ == "integer" && t.Kind() >= reflect.Uint {
		s.Minimum = "0"
	}
	// The range of a sized integer is part of the schema, so that the
	// schema alone says what is accepted.
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		s.Minimum = json.Number(strconv.FormatInt(-1<<(bits-1), 10))
		s.Maximum = json.Number(strconv.FormatInt(1<<(bits-1)-1, 10))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		s.Maximum = json.Number(strconv.FormatUint(1<<t.Bits()-1, 10))
	}
	if t.PkgPath() != "" && t.Name() != "" {
		if facts, ok := gosource.ForType(t, d.hint); ok && len(facts.Enum) > 0 {
			for _, lit := range facts.Enum {
				var v any
				if err := json.Unmarshal([]byte(lit), &v); err == nil {
					s.Enum = append(s.Enum, v)
				}
			}
			s.Description = docText(facts.Doc)
			return s
		}
	}
	if s.Minimum == "" {
		return nil
	}
	return s
}

const (
	durationDoc     = `a duration such as "90s" or "1h30m"` // what the schema says
	durationHint    = "a Go duration such as 90s or 1h30m"  // what a message says
	durationPattern = `^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))*$`
)

// lookupComment describes a field by its `doc:"..."` tag or its doc comment
// in the source, and a struct type by its doc comment.
func (d deriver) lookupComment(t reflect.Type, field string) (desc string) {
	if field != "" {
		if f, ok := t.FieldByName(field); ok {
			if doc := f.Tag.Get("doc"); doc != "" {
				return doc
			}
			if f.Type == durationType || f.Type.Kind() == reflect.Pointer && f.Type.Elem() == durationType {
				defer func() {
					if desc == "" {
						desc = durationDoc
					} else {
						desc += " (" + durationDoc + ")"
					}
				}()
			}
		}
	}
	if t.PkgPath() == "" || t.Name() == "" {
		return ""
	}
	facts, ok := gosource.ForType(t, d.hint)
	if !ok {
		return ""
	}
	if field == "" {
		return docText(facts.Doc)
	}
	for _, f := range facts.Fields {
		if f.Name == field {
			return docText(f.Doc)
		}
	}
	return ""
}

// docText is the first paragraph of doc comment lines, directives dropped.
func docText(lines []string) string {
	d, _ := parseDoc(lines, nil)
	return d.description
}

// fixRequired applies our rule on top of the reflector's: a struct field is
// required unless it is a pointer, is omitempty/omitzero or has a default.
func fixRequired(s *jsonschema.Schema, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			fixRequired(s.Items, t.Elem())
		}
		return
	case reflect.Map:
		if s.AdditionalProperties != nil && s.AdditionalProperties != jsonschema.FalseSchema && s.AdditionalProperties != jsonschema.TrueSchema {
			fixRequired(s.AdditionalProperties, t.Elem())
		}
		return
	case reflect.Struct:
	default:
		return
	}
	if t == timeType || s.Properties == nil {
		return
	}
	for _, f := range jsonFields(t) {
		prop, ok := s.Properties.Get(f.name)
		if !ok {
			continue
		}
		if f.typ.Kind() == reflect.Pointer || prop.Default != nil {
			s.Required = slices.DeleteFunc(s.Required, func(n string) bool { return n == f.name })
		}
		fixRequired(prop, f.typ)
	}
}

// listParams lists the top-level parameters for error messages:
// "query (string, required), limit (integer)".
func listParams(s *jsonschema.Schema) string {
	if s.Properties == nil || s.Properties.Len() == 0 {
		return "none (call it with {})"
	}
	var b strings.Builder
	for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pair.Key)
		b.WriteString(" (")
		b.WriteString(typeName(pair.Value))
		if f := pair.Value.Format; f != "" {
			b.WriteString(", " + f)
		}
		if slices.Contains(s.Required, pair.Key) {
			b.WriteString(", required")
		}
		b.WriteString(")")
	}
	return b.String()
}

func typeName(s *jsonschema.Schema) string {
	switch {
	case s.Type == "array" && s.Items != nil && s.Items.Type != "":
		return "array of " + s.Items.Type
	case len(s.Enum) > 0:
		var vals []string
		for _, v := range s.Enum {
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		return "one of " + strings.Join(vals, ", ")
	case s.Type != "":
		return s.Type
	}
	return "any JSON"
}

// strict returns the OpenAI strict form of the schema: every property
// required, optional ones nullable, additionalProperties false everywhere,
// no keywords strict mode refuses (default, minLength, maxLength: the
// arguments are still held to them before the call, and the lengths are
// written in the description, so the model is told the rule). It works on the
// schema's JSON as it is, so a raw tool's schema keeps every keyword and
// its order. What strict mode cannot express (a free-form object,
// conditional keywords) is an error naming where it is.
func (p *paramSchema) strict() ([]byte, error) {
	p.strictOnce.Do(func() {
		p.strictJSON, p.strictErr = strictForm(p.json, false)
	})
	return p.strictJSON, p.strictErr
}

// strictTool returns a copy of t that a Strict agent sends and calls: its
// Definition is the strict form. Its arguments are held to the same
// checker: with null counting as absent and optional fields allowed to be
// left out, the strict form accepts what the plain one does.
func (t *Tool) strictTool() (*Tool, error) {
	if _, err := t.params.strict(); err != nil {
		return nil, err
	}
	st := *t
	st.strict = true
	if t.params.plan == nil {
		// A raw tool's schema may allow what its strict form does not
		// (other properties): hold calls to the strict form too.
		b, err := strictForm(t.params.json, true)
		if err != nil {
			return nil, err
		}
		chk, err := newChecker(b, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("strict form: %w", err)
		}
		ps := &paramSchema{json: b, listing: t.params.listing, checker: chk}
		inner := t.invoke
		st.invoke = func(ctx context.Context, args string) (any, error) {
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			if err := ps.explain(ctx, t.name, args, nil); err != nil {
				return nil, err
			}
			return inner(ctx, args)
		}
	}
	return &st, nil
}

// strictForm rewrites the parameters schema b into its strict form. With
// leave, optional properties stay optional (still nullable): the form a
// strict call is checked against, since not every server enforces strict
// mode.
func strictForm(b []byte, leave bool) ([]byte, error) {
	v, err := decodeOrdered(b)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	if err := makeStrict(v, "parameters", leave, true); err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode strict schema: %w", err)
	}
	return out, nil
}

// strictDropped are keywords strict mode does not accept that only narrow
// what is valid or annotate: the strict form leaves them out, and calls
// are still held to them.
var strictDropped = []string{"default", "minLength", "maxLength", "$schema", "$id", "$comment", "examples"}

// describeLengths tells the model, in the description of the string
// schema s, the minLength and maxLength that strict mode does not take as
// keywords: the arguments are held to them, so the model must know them.
func describeLengths(s *jsonObject) {
	lo, hasLo := s.get("minLength")
	hi, hasHi := s.get("maxLength")
	var rule string
	switch {
	case hasLo && hasHi:
		rule = fmt.Sprintf("%v to %v characters", lo, hi)
	case hasLo:
		rule = fmt.Sprintf("at least %v characters", lo)
	case hasHi:
		rule = fmt.Sprintf("at most %v characters", hi)
	default:
		return
	}
	desc, _ := s.get("description")
	if text, _ := desc.(string); text != "" {
		s.set("description", strings.TrimRight(text, " .")+" ("+rule+")")
		return
	}
	s.set("description", rule)
}

// strictRefused are keywords strict mode cannot express: the model could
// not know the rule they state.
var strictRefused = map[string]string{
	"allOf":                 "all of several schemas",
	"not":                   "a schema a value must not match",
	"if":                    "a conditional schema",
	"then":                  "a conditional schema",
	"else":                  "a conditional schema",
	"dependentRequired":     "properties required when another is present",
	"dependentSchemas":      "a schema applied when a property is present",
	"dependencies":          "properties required when another is present",
	"patternProperties":     "properties named by a pattern",
	"propertyNames":         "a rule on property names",
	"unevaluatedProperties": "unevaluated properties",
	"unevaluatedItems":      "unevaluated items",
	"prefixItems":           "a tuple",
	"contains":              "an array that must contain a value",
	"minProperties":         "a number of properties",
	"maxProperties":         "a number of properties",
}

// makeStrict rewrites the schema v, decoded by decodeOrdered, in place.
// top is set for the parameters object itself, which may list no
// properties (a tool without parameters).
func makeStrict(v any, path string, leave, top bool) error {
	s, ok := v.(*jsonObject)
	if !ok {
		if v == true {
			return fmt.Errorf("strict mode cannot express %s: it accepts any JSON value; use a concrete type or drop onion.Strict()", path)
		}
		if _, isBool := v.(bool); isBool {
			return nil
		}
		return fmt.Errorf("strict mode cannot express %s: its schema is not an object", path)
	}
	for _, k := range s.keys {
		if why, refused := strictRefused[k]; refused {
			return fmt.Errorf("strict mode cannot express %s: keyword %q (%s) has no strict form; drop onion.Strict() for this agent", path, k, why)
		}
	}
	describeLengths(s)
	for _, k := range strictDropped {
		s.del(k)
	}
	// Draft-04 states an exclusive bound as a boolean next to the bound.
	for _, pair := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		if excl, ok := s.get(pair[0]); ok {
			if b, isBool := excl.(bool); isBool {
				s.del(pair[0])
				if bound, ok := s.get(pair[1]); ok && b {
					s.set(pair[0], bound)
					s.del(pair[1])
				}
			}
		}
	}
	types := schemaTypes(s)
	_, hasRef := s.get("$ref")
	_, hasAnyOf := s.get("anyOf")
	_, hasOneOf := s.get("oneOf")
	_, hasEnum := s.get("enum")
	_, hasConst := s.get("const")
	if len(types) == 0 && !hasRef && !hasAnyOf && !hasOneOf && !hasEnum && !hasConst {
		return fmt.Errorf("strict mode cannot express %s: it accepts any JSON value; use a concrete type or drop onion.Strict()", path)
	}
	if slices.Contains(types, "object") {
		if err := strictObject(s, path, leave, top); err != nil {
			return err
		}
	}
	if slices.Contains(types, "array") {
		items, ok := s.get("items")
		if _, isSchema := items.(*jsonObject); !ok || !isSchema {
			return fmt.Errorf("strict mode cannot express %s: an array of any JSON values", path)
		}
		if err := makeStrict(items, path+"[]", leave, false); err != nil {
			return err
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, _ := s.get(k)
		list, _ := alts.([]any)
		for _, alt := range list {
			if err := makeStrict(alt, path, leave, false); err != nil {
				return err
			}
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		defs, _ := s.get(k)
		if d, ok := defs.(*jsonObject); ok {
			for _, name := range d.keys {
				if err := makeStrict(d.vals[name], path+"."+k+"."+name, leave, false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// strictObject makes an object schema strict: its properties fixed and
// required, the optional ones nullable.
func strictObject(s *jsonObject, path string, leave, top bool) error {
	addl, hasAddl := s.get("additionalProperties")
	pv, hasProps := s.get("properties")
	if hasAddl && addl != false || !hasProps && (hasAddl || !top) {
		return fmt.Errorf("strict mode cannot express %s: a free-form object (a map) has no fixed properties; use a struct or drop onion.Strict()", path)
	}
	props, ok := pv.(*jsonObject)
	if !hasProps {
		props, ok = &jsonObject{vals: map[string]any{}}, true
		s.set("properties", props)
	}
	if !ok {
		return fmt.Errorf("strict mode cannot express %s: its properties are not an object", path)
	}
	s.set("additionalProperties", false)
	var required []string
	if r, ok := s.get("required"); ok {
		list, _ := r.([]any)
		for _, n := range list {
			if name, ok := n.(string); ok {
				required = append(required, name)
			}
		}
	}
	all := make([]any, 0, len(props.keys))
	for _, k := range props.keys {
		if err := makeStrict(props.vals[k], path+"."+k, leave, false); err != nil {
			return err
		}
		if !slices.Contains(required, k) {
			props.vals[k] = &jsonObject{keys: []string{"anyOf"}, vals: map[string]any{
				"anyOf": []any{props.vals[k], &jsonObject{keys: []string{"type"}, vals: map[string]any{"type": "null"}}},
			}}
		}
		all = append(all, k)
	}
	if !leave {
		// OpenAI's strict mode wants every property listed, even none.
		s.set("required", all)
	}
	return nil
}

// schemaTypes lists a schema's "type": one name or a list of them.
func schemaTypes(s *jsonObject) []string {
	switch t := s.vals["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var names []string
		for _, n := range t {
			if name, ok := n.(string); ok {
				names = append(names, name)
			}
		}
		return names
	}
	return nil
}

// validate runs the full JSON Schema validator over args, with the
// leniency every path applies (null for an optional field counts as
// absent), and returns every problem it finds as "field: what is wrong"
// lines. args must have passed checkShape, and the caller holds
// c.patterns: a pattern that gave up is a problem of its own, and the
// mismatches it left undecided are none.
func (c *checker) validate(args []byte) []string {
	inst, err := santhosh.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return []string{argsNotJSON + err.Error()}
	}
	inst = dropNullOptionals(inst, c.validator)
	err = c.validator.Validate(inst)
	var out []string
	run := c.patterns.current()
	if run != nil && run.gaveUp != nil {
		// Even where the validator accepts (a pattern under "not"), a
		// value no pattern could decide is not accepted.
		out = append(out, run.gaveUp.problem(inst))
	}
	var ve *santhosh.ValidationError
	if err != nil && errors.As(err, &ve) {
		collectProblems(ve, inst, run, &out)
	}
	slices.Sort(out) // the validator's order follows map order
	return out
}

// dropNullOptionals removes, in the objects of v that cs describes, the
// properties sent as null that cs does not require: a strict schema tells
// the model to send null for an optional field, and null means absent on
// every path. In a strict schema an optional property is required and
// "anyOf: [schema, null]".
func dropNullOptionals(v any, cs *santhosh.Schema) any {
	if cs == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			prop := cs.Properties[k]
			if prop == nil {
				continue
			}
			inner, wrapped := nullable(prop)
			if e == nil && (wrapped || !slices.Contains(cs.Required, k)) {
				delete(x, k)
				continue
			}
			x[k] = dropNullOptionals(e, inner)
		}
	case []any:
		items := cs.Items2020
		if it, ok := cs.Items.(*santhosh.Schema); ok {
			items = it
		}
		for i, e := range x {
			x[i] = dropNullOptionals(e, items)
		}
	}
	return v
}

// collectProblems flattens the validator's error tree into one line per
// leaf: the field's path and what is wrong with it, in the words the
// decoder uses.
func collectProblems(ve *santhosh.ValidationError, inst any, run *patternRun, out *[]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectProblems(c, inst, run, out)
		}
		return
	}
	add := func(tokens []string, what string) {
		line := fieldPath(tokens) + ": " + what
		if !slices.Contains(*out, line) {
			*out = append(*out, line)
		}
	}
	at := ve.InstanceLocation
	got := "?"
	if v, ok := valueAt(inst, at); ok {
		got = describeValue(v)
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			add(append(slices.Clip(at), m), errMissing.Error())
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			add(append(slices.Clip(at), p), errUnknownField.Error())
		}
	case *kind.Type:
		add(at, "expected "+strings.Join(k.Want, " or ")+", got "+got)
	case *kind.Enum:
		add(at, "expected one of "+enumList(k.Want)+", got "+got)
	case *kind.Format:
		add(at, "expected "+formatHint(k.Want)+", got "+got)
	case *kind.Pattern:
		if run != nil && run.undecided[[2]string{k.Want, k.Got}] {
			return // not a mismatch: its match gave up, which validate reports
		}
		if k.Want == durationPattern {
			add(at, "expected "+durationHint+", got "+got)
		} else {
			add(at, "expected a string matching "+quoteValue(k.Want)+", got "+got)
		}
	case *kind.MinLength:
		add(at, fmt.Sprintf("expected at least %d characters, got %d", k.Want, k.Got))
	case *kind.MaxLength:
		add(at, fmt.Sprintf("expected at most %d characters, got %d", k.Want, k.Got))
	case *kind.Minimum:
		add(at, "expected a number >= "+k.Want.RatString()+", got "+got)
	case *kind.Maximum:
		add(at, "expected a number <= "+k.Want.RatString()+", got "+got)
	case *kind.ExclusiveMinimum:
		add(at, "expected a number > "+k.Want.RatString()+", got "+got)
	case *kind.ExclusiveMaximum:
		add(at, "expected a number < "+k.Want.RatString()+", got "+got)
	case *kind.MinItems:
		add(at, fmt.Sprintf("expected at least %d items, got %d", k.Want, k.Got))
	case *kind.MaxItems:
		add(at, fmt.Sprintf("expected at most %d items, got %d", k.Want, k.Got))
	default:
		add(at, ve.ErrorKind.LocalizedString(english)+", got "+got)
	}
}

var english = message.NewPrinter(language.English)

// describeValue names a value as messages do: its JSON type, and for
// scalars the value itself, strings quoted as JSON.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case string:
		return "string " + quoteValue(x)
	case json.Number:
		return "number " + truncate(string(x), 40)
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprint(v)
}

// fieldPath renders a JSON pointer's tokens as a.b[0].c; the root is
// "arguments".
func fieldPath(tokens []string) string {
	if len(tokens) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for _, tok := range tokens {
		if tok != "" && strings.Trim(tok, "0123456789") == "" {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// valueAt finds the value at a JSON pointer's tokens.
func valueAt(v any, tokens []string) (any, bool) {
	for _, tok := range tokens {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

var resultSchemaCache sync.Map // reflect.Type → []byte

// resultSchema is the JSON Schema of a tool's Go result type, derived once
// per type.
func resultSchema(t reflect.Type, hint string) ([]byte, error) {
	if b, ok := resultSchemaCache.Load(t); ok {
		return b.([]byte), nil
	}
	if err := checkType(t, "result", map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	b, err := json.Marshal(deriver{hint: hint}.reflect(t))
	if err != nil {
		return nil, fmt.Errorf("encode result schema: %w", err)
	}
	actual, _ := resultSchemaCache.LoadOrStore(t, b)
	return actual.([]byte), nil
}

// decodeArgs checks args and decodes them into v, under ctx (which bounds
// the regexp2 patterns). On failure it returns an *ArgumentError naming
// every problem.
func (p *paramSchema) decodeArgs(ctx context.Context, tool, args string, v reflect.Value) error {
	if v.CanAddr() {
		return p.decodeInto(ctx, tool, args, v.Addr().UnsafePointer())
	}
	return p.decodeValue(ctx, tool, args, v)
}

// decodeInto is decodeArgs for the zero struct at ptr, of the plan's type.
// The flat plan reads what it can (flatdecode.go); whatever it gives up on
// is read again, from a cleared struct, by the jsontext plan, which also
// words every rejection.
func (p *paramSchema) decodeInto(ctx context.Context, tool, args string, ptr unsafe.Pointer) error {
	if f := p.plan.flat; f != nil && (p.patterns == nil || p.patterns.gate == nil) {
		if f.decode(args, ptr) {
			if p.fullCheck {
				return p.explain(ctx, tool, args, nil)
			}
			return nil
		}
		v := reflect.NewAt(p.plan.typ, ptr).Elem()
		v.SetZero()
		return p.decodeValue(ctx, tool, args, v)
	}
	return p.decodeValue(ctx, tool, args, reflect.NewAt(p.plan.typ, ptr).Elem())
}

// decodeValue is decodeArgs with the jsontext plan alone.
func (p *paramSchema) decodeValue(ctx context.Context, tool, args string, v reflect.Value) error {
	// Only arguments that start with a space can be all spaces: a model's
	// usual "{" skips the scan.
	if args == "" || (args[0] <= ' ' || args[0] >= utf8.RuneSelf) && strings.TrimSpace(args) == "" {
		args = "{}"
	}
	release, err := p.patterns.hold(ctx)
	if err != nil {
		return &ArgumentError{Tool: tool, Problems: []string{err.Error()}, Params: p.listing}
	}
	defer release()
	r := newArgReader(args)
	err = p.plan.decode(r, v)
	if err == nil {
		err = r.end()
	}
	r.release()
	if err == nil && !p.fullCheck {
		return nil
	}
	return p.explainHeld(tool, args, err)
}

// explain turns a rejected call into an *ArgumentError; with a nil fastErr
// it runs the full validator, under ctx, and reports only what it finds.
func (p *paramSchema) explain(ctx context.Context, tool, args string, fastErr error) error {
	release, err := p.patterns.hold(ctx)
	if err != nil {
		return &ArgumentError{Tool: tool, Problems: []string{err.Error()}, Params: p.listing}
	}
	defer release()
	return p.explainHeld(tool, args, fastErr)
}

// explainHeld is explain for a caller that holds p.patterns.
func (p *paramSchema) explainHeld(tool, args string, fastErr error) error {
	fail := func(problems ...string) error {
		return &ArgumentError{Tool: tool, Problems: problems, Params: p.listing}
	}
	if err := checkShape(args); err != nil {
		var le *limitError
		if errors.As(err, &le) {
			return fail(le.msg)
		}
		return fail(err.Error() + `; send one JSON object such as {"name": value}`)
	}
	problems := p.validate([]byte(args))
	if len(problems) == 0 {
		if fastErr == nil {
			return nil
		}
		problems = []string{fastErr.Error()}
	}
	return fail(problems...)
}
