package onion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fatih/structtag"
	"github.com/invopop/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"

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
