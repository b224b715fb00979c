package onion

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// This file is strict mode (Strict): the schema rewritten as OpenAI's
// strict mode takes it, and what it cannot express refused with its path.

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
