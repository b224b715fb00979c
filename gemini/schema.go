package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/onionkit/onion/loop"
)

// This file turns onion's JSON Schemas (a tool's parameters, a typed
// answer's Format) into the JSON Schema the Gemini API takes in
// parametersJsonSchema and responseJsonSchema: a subset of JSON Schema
// (the keywords listed in kept below, as the API documents them). What
// the subset cannot say is converted when the meaning survives: a
// keyword that only narrows what is valid (a pattern, a length, an
// exclusive bound) is written into the description, so the model is
// told the rule, and onion still holds every call's arguments to the
// whole schema before the tool runs; const becomes a one-value enum; a
// $ref beside other keywords is wrapped in anyOf. What cannot be said
// (allOf, not, conditionals, a keyword Gemini does not know) is refused,
// naming the keyword and where it is, when the agent is made
// (CheckTools).

// maxSchemaDepth bounds the nesting of a schema converted.
const maxSchemaDepth = 64

// kept are the keywords Gemini's JSON Schema takes, sent as they are (the
// subschemas in them converted in turn).
var kept = map[string]bool{
	"$id": true, "$defs": true, "$ref": true, "$anchor": true,
	"type": true, "format": true, "title": true, "description": true,
	"enum": true, "items": true, "prefixItems": true, "minItems": true,
	"maxItems": true, "minimum": true, "maximum": true, "anyOf": true,
	"oneOf": true, "properties": true, "additionalProperties": true,
	"required": true, "propertyOrdering": true,
}

// dropped are annotations with no rule in them: leaving them out changes
// nothing the arguments are held to.
var dropped = map[string]bool{
	"$schema": true, "$comment": true, "examples": true, "example": true,
	"default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// described are keywords that only narrow what is valid: the converted
// schema states them in its description instead.
var described = map[string]bool{
	"pattern": true, "minLength": true, "maxLength": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"uniqueItems": true, "minProperties": true, "maxProperties": true,
}

// refused are keywords Gemini's JSON Schema cannot say: the model could
// not know the rule they state.
var refused = map[string]string{
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
	"additionalItems":       "items after a tuple",
	"contains":              "an array that must contain a value",
	"minContains":           "an array that must contain a value",
	"maxContains":           "an array that must contain a value",
	"$dynamicRef":           "a dynamic reference",
	"$dynamicAnchor":        "a dynamic reference",
	"$recursiveRef":         "a recursive reference",
	"$recursiveAnchor":      "a recursive reference",
}

// SchemaError is a schema Gemini cannot take: the keyword and where it is.
type SchemaError struct {
	// Path is where the keyword is, from "parameters" (a tool) or
	// "format" (a typed answer) down: "parameters.properties.when".
	Path string
	// Keyword is the keyword refused.
	Keyword string
	// Why says what the keyword states, or why it cannot be sent.
	Why string
}

// Error names the keyword, where it is, and what to do.
func (e *SchemaError) Error() string {
	return fmt.Sprintf("%s: keyword %q (%s) has no form in the JSON Schema the Gemini API takes; "+
		"remove it from the schema (the tool may check the rule itself)", e.Path, e.Keyword, e.Why)
}

// toolName is what the Gemini API takes as a function's name.
var toolName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$`)

// CheckTools reports whether the Gemini API can take defs: each name as
// a function name, each schema in its JSON Schema. onion.NewAgent calls
// it (see loop.ToolChecker), so that an agent whose tools Gemini would
// refuse fails when it is made, naming the tool and the keyword.
func (m *Model) CheckTools(defs []loop.ToolDef) error {
	for _, d := range defs {
		if !toolName.MatchString(d.Name) {
			return fmt.Errorf("gemini: tool %q: the Gemini API takes function names of 1 to 128 letters, digits, '_', '.', ':' and '-', starting with a letter or '_'", d.Name)
		}
		if _, err := m.schemas.convert(d.Parameters, "parameters"); err != nil {
			return fmt.Errorf("gemini: tool %q: %w", d.Name, err)
		}
	}
	return nil
}

// schemaCache keeps converted schemas by their JSON text: an agent sends
// the same few with every request.
type schemaCache struct {
	mu sync.Mutex // guards m
	m  map[string]cached
}

type cached struct {
	v   any
	err error
}

// maxCached bounds the schemas kept: more than an agent's tools means
// they change between requests, and the cache starts over.
const maxCached = 512

// convert returns the Gemini form of the schema b, a JSON value for
// genai to send, or what it cannot take; path names b in errors. An
// empty b is a function without parameters: nil.
func (c *schemaCache) convert(b json.RawMessage, path string) (any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	key := path + "\x00" + string(b)
	c.mu.Lock()
	if r, ok := c.m[key]; ok {
		c.mu.Unlock()
		return r.v, r.err
	}
	c.mu.Unlock()
	v, err := convertSchema(b, path)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[string]cached{}
	}
	c.m[key] = cached{v, err}
	c.mu.Unlock()
	return v, err
}

// convertSchema converts the schema text b.
func convertSchema(b []byte, path string) (any, error) {
	v, err := decodeOrdered(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a JSON Schema: %w", path, err)
	}
	return convert(v, path, 0)
}

// object is a JSON object with its keys in order, as decodeOrdered reads
// it: the order of "properties" is the order the model should fill them.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

// convert converts the schema v found at path.
func convert(v any, path string, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%s: nested more than %d levels deep", path, maxSchemaDepth)
	}
	switch s := v.(type) {
	case bool:
		if !s {
			return nil, &SchemaError{Path: path, Keyword: "false", Why: "a schema no value fits"}
		}
		return map[string]any{}, nil // any value, as an empty schema says it
	case *object:
		return convertObject(s, path, depth)
	}
	return nil, fmt.Errorf("%s: a schema is an object or a boolean, not %s", path, jsonKind(v))
}

func convertObject(s *object, path string, depth int) (any, error) {
	out := make(map[string]any, len(s.keys)+1)
	var rules []string
	for _, k := range s.keys {
		v := s.vals[k]
		switch {
		case k == "properties" || k == "$defs" || k == "definitions":
			names, ok := v.(*object)
			if !ok {
				return nil, fmt.Errorf("%s.%s: not an object of schemas", path, k)
			}
			m := make(map[string]any, len(names.keys))
			for _, name := range names.keys {
				c, err := convert(names.vals[name], path+"."+k+"."+name, depth+1)
				if err != nil {
					return nil, err
				}
				m[name] = c
			}
			if k == "definitions" {
				k = "$defs" // the same thing by its newer name; refs are moved below
			}
			out[k] = m
			if k == "properties" && len(names.keys) > 1 {
				// genai sends maps with their keys sorted: the order the
				// schema gives them travels in propertyOrdering.
				if _, given := s.get("propertyOrdering"); !given {
					order := make([]any, len(names.keys))
					for i, n := range names.keys {
						order[i] = n
					}
					out["propertyOrdering"] = order
				}
			}
		case k == "items" || k == "additionalProperties":
			if list, ok := v.([]any); ok && k == "items" {
				// Draft-04 tuples: items as a list is prefixItems.
				c, err := convertList(list, path+".items", depth)
				if err != nil {
					return nil, err
				}
				out["prefixItems"] = c
				continue
			}
			if b, isBool := v.(bool); isBool && k == "additionalProperties" {
				out[k] = b
				continue
			}
			c, err := convert(v, path+"."+k, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = c
		case k == "prefixItems" || k == "anyOf" || k == "oneOf":
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s.%s: not a list of schemas", path, k)
			}
			c, err := convertList(list, path+"."+k, depth)
			if err != nil {
				return nil, err
			}
			out[k] = c
		case k == "$ref":
			ref, _ := v.(string)
			if rest, ok := strings.CutPrefix(ref, "#/definitions/"); ok {
				ref = "#/$defs/" + rest
			}
			out[k] = ref
		case k == "enum":
			if err := checkEnum(v, path); err != nil {
				return nil, err
			}
			out[k] = plain(v)
		case k == "const":
			if _, has := s.get("enum"); !has {
				if err := checkEnum([]any{v}, path); err != nil {
					return nil, err
				}
				out["enum"] = []any{plain(v)}
			}
		case kept[k]:
			out[k] = plain(v)
		case dropped[k]:
		case described[k]:
			if r := rule(k, v, s); r != "" {
				rules = append(rules, r)
			}
			if k == "exclusiveMinimum" || k == "exclusiveMaximum" {
				// A numeric exclusive bound stays as the inclusive one
				// next to it: looser, but a bound the model sees.
				inclusive := "minimum"
				if k == "exclusiveMaximum" {
					inclusive = "maximum"
				}
				if _, has := s.get(inclusive); !has {
					if n, ok := v.(json.Number); ok {
						out[inclusive] = n
					}
				}
			}
		default:
			why, ok := refused[k]
			if !ok {
				why = "not a keyword Gemini knows"
			}
			return nil, &SchemaError{Path: path, Keyword: k, Why: why}
		}
	}
	if len(rules) > 0 {
		desc, _ := out["description"].(string)
		text := strings.Join(rules, "; ")
		if desc = strings.TrimRight(desc, " ."); desc != "" {
			text = desc + " (" + text + ")"
		}
		out["description"] = text
	}
	if ref, ok := out["$ref"]; ok && hasSiblings(out) {
		// Gemini takes nothing but $-keywords beside a $ref: the ref
		// becomes the one alternative of an anyOf, the rest stays.
		delete(out, "$ref")
		out["anyOf"] = []any{map[string]any{"$ref": ref}}
	}
	return out, nil
}

func convertList(list []any, path string, depth int) ([]any, error) {
	out := make([]any, len(list))
	for i, v := range list {
		c, err := convert(v, fmt.Sprintf("%s[%d]", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// hasSiblings reports whether the converted schema s holds a keyword
// that does not start with '$' besides its $ref.
func hasSiblings(s map[string]any) bool {
	for k := range s {
		if !strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}

// checkEnum refuses an enum Gemini cannot take: it takes strings and
// numbers.
func checkEnum(v any, path string) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s.enum: not a list", path)
	}
	for _, e := range list {
		switch e.(type) {
		case string, json.Number:
		default:
			return &SchemaError{Path: path, Keyword: "enum", Why: "a value of " + jsonKind(e) + "; Gemini takes enums of strings and numbers"}
		}
	}
	return nil
}

// rule is the keyword k of value v in s, in words for the description.
func rule(k string, v any, s *object) string {
	n := fmt.Sprint(v)
	switch k {
	case "pattern":
		return "matching the regular expression " + n
	case "minLength":
		if hi, ok := s.get("maxLength"); ok {
			return fmt.Sprintf("%s to %v characters", n, hi)
		}
		return "at least " + n + " characters"
	case "maxLength":
		if _, ok := s.get("minLength"); ok {
			return "" // said with minLength
		}
		return "at most " + n + " characters"
	case "exclusiveMinimum", "exclusiveMaximum":
		word := "greater"
		bound := "minimum"
		if k == "exclusiveMaximum" {
			word, bound = "less", "maximum"
		}
		if b, isBool := v.(bool); isBool {
			// Draft-04: a boolean beside the bound it makes exclusive.
			if limit, ok := s.get(bound); ok && b {
				return fmt.Sprintf("%s than %v", word, limit)
			}
			return ""
		}
		return word + " than " + n
	case "multipleOf":
		return "a multiple of " + n
	case "uniqueItems":
		if v == true {
			return "no item twice"
		}
		return ""
	case "minProperties":
		return "at least " + n + " properties"
	case "maxProperties":
		return "at most " + n + " properties"
	}
	return ""
}

// plain is v with its ordered objects as maps, for genai to encode.
func plain(v any) any {
	switch x := v.(type) {
	case *object:
		m := make(map[string]any, len(x.keys))
		for _, k := range x.keys {
			m[k] = plain(x.vals[k])
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	}
	return "an object"
}

// decodeOrdered decodes the JSON text b, objects as *object with their
// keys in order and numbers as json.Number, at most maxSchemaDepth deep.
func decodeOrdered(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the schema")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxSchemaDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[k]; !dup {
				o.keys = append(o.keys, k)
			}
			o.vals[k] = v
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return tok, nil
}
