package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// This file holds a JSON Schema to what Anthropic's structured output
// (output_config.format, and tools with strict) takes: the keywords it
// does not take are moved into the description, where the model still
// reads them, as Anthropic's SDKs do; an object's additionalProperties is
// false; oneOf becomes anyOf. onion checks the answer against the whole
// schema when it comes back. The keys keep their order, which the model
// writes its answer in.

// supportedKeys are the keywords Anthropic's structured output takes
// (anthropic-sdk-go's schemautil.go).
var supportedKeys = map[string]bool{
	"$ref": true, "$defs": true, "type": true, "anyOf": true, "oneOf": true, "allOf": true,
	"description": true, "title": true, "enum": true, "const": true,
	"properties": true, "additionalProperties": true, "required": true,
	"items": true, "minItems": true, "format": true, "pattern": true,
}

// metaKeys say what a schema is, not what it holds: they are left out.
var metaKeys = map[string]bool{"$schema": true, "$id": true, "$comment": true}

var supportedFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// maxSchemaDepth bounds the nesting of a schema.
const maxSchemaDepth = 64

// schemaCache keeps the last schema held, since a run sends the same one
// with every request.
var schemaCache struct {
	mu       sync.Mutex
	in, out  []byte
	hasValue bool
}

// outputSchema returns schema held to what Anthropic's structured output
// takes.
func outputSchema(schema []byte) ([]byte, error) {
	schemaCache.mu.Lock()
	if schemaCache.hasValue && bytes.Equal(schemaCache.in, schema) {
		out := schemaCache.out
		schemaCache.mu.Unlock()
		return out, nil
	}
	schemaCache.mu.Unlock()
	out, err := holdSchema(bytes.TrimSpace(schema), 0)
	if err != nil {
		return nil, err
	}
	schemaCache.mu.Lock()
	schemaCache.in, schemaCache.out, schemaCache.hasValue = append([]byte(nil), schema...), out, true
	schemaCache.mu.Unlock()
	return out, nil
}

// member is one key of an object and its value, in order.
type member struct {
	key   string
	value json.RawMessage
}

func holdSchema(raw []byte, depth int) ([]byte, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxSchemaDepth)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return raw, nil // true, false: kept as they are
	}
	obj, err := members(raw)
	if err != nil {
		return nil, err
	}
	var out []member
	var extras []member
	typ := ""
	for _, mb := range obj {
		if mb.key == "type" {
			_ = json.Unmarshal(mb.value, &typ)
		}
	}
	hasAnyOf := slices.ContainsFunc(obj, func(mb member) bool { return mb.key == "anyOf" })
	hasProps, hasAdditional := false, false
	for _, mb := range obj {
		k, v := mb.key, mb.value
		switch {
		case metaKeys[k]:
			continue
		case !supportedKeys[k]:
			extras = append(extras, mb)
			continue
		}
		switch k {
		case "properties", "$defs":
			sub, err := members(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			for i := range sub {
				if sub[i].value, err = holdSchema(sub[i].value, depth+1); err != nil {
					return nil, fmt.Errorf("%s.%s: %w", k, sub[i].key, err)
				}
			}
			v = writeObject(sub)
			hasProps = hasProps || k == "properties"
		case "items", "additionalProperties":
			if v, err = holdSchema(bytes.TrimSpace(v), depth+1); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			hasAdditional = hasAdditional || k == "additionalProperties"
		case "anyOf", "allOf", "oneOf":
			var list []json.RawMessage
			if err := json.Unmarshal(v, &list); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			for i := range list {
				if list[i], err = holdSchema(bytes.TrimSpace(list[i]), depth+1); err != nil {
					return nil, fmt.Errorf("%s.%d: %w", k, i, err)
				}
			}
			v = writeArray(list)
			if k == "oneOf" {
				if hasAnyOf {
					extras = append(extras, mb)
					continue
				}
				k = "anyOf"
			}
		case "format":
			var f string
			if json.Unmarshal(v, &f) != nil || !slices.Contains(supportedFormats, f) {
				extras = append(extras, mb)
				continue
			}
		case "minItems":
			if s := string(bytes.TrimSpace(v)); s != "0" && s != "1" {
				extras = append(extras, mb)
				continue
			}
		}
		out = append(out, member{k, v})
	}
	if typ == "object" {
		switch {
		case hasProps:
			out = setMember(out, "additionalProperties", json.RawMessage("false"))
		case !hasAdditional:
			out = append(out, member{"properties", json.RawMessage("{}")}, member{"additionalProperties", json.RawMessage("false")})
		}
	}
	if len(extras) > 0 {
		out = addDescription(out, extras)
	}
	return writeObject(out), nil
}

// addDescription appends the keywords extras to the description of the
// schema obj, as "{key: value, ...}", keys sorted.
func addDescription(obj, extras []member) []member {
	sort.Slice(extras, func(i, j int) bool { return extras[i].key < extras[j].key })
	parts := make([]string, len(extras))
	for i, e := range extras {
		v := string(bytes.TrimSpace(e.value))
		var s string
		if json.Unmarshal(e.value, &s) == nil {
			v = s
		}
		parts[i] = e.key + ": " + v
	}
	note := "{" + strings.Join(parts, ", ") + "}"
	for i, mb := range obj {
		if mb.key == "description" {
			var d string
			_ = json.Unmarshal(mb.value, &d)
			if d != "" {
				note = d + "\n\n" + note
			}
			obj[i].value = appendString(nil, note)
			return obj
		}
	}
	return append(obj, member{"description", appendString(nil, note)})
}

// setMember sets key to v in obj, where it is or at the end.
func setMember(obj []member, key string, v json.RawMessage) []member {
	for i := range obj {
		if obj[i].key == key {
			obj[i].value = v
			return obj
		}
	}
	return append(obj, member{key, v})
}

// members reads the JSON object raw, its keys in order.
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, bytes.TrimSpace(v)})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return out, nil
}

// writeArray writes list as a JSON array, compactly.
func writeArray(list []json.RawMessage) []byte {
	b := []byte{'['}
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCompact(b, v)
	}
	return append(b, ']')
}

// appendCompact appends v without insignificant spaces, escaping nothing.
func appendCompact(b []byte, v []byte) []byte {
	var c bytes.Buffer
	if json.Compact(&c, v) == nil {
		return append(b, c.Bytes()...)
	}
	return append(b, v...)
}

// writeObject writes obj as a JSON object, compactly.
func writeObject(obj []member) []byte {
	b := []byte{'{'}
	for i, mb := range obj {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, mb.key)
		b = append(b, ':')
		b = appendCompact(b, mb.value)
	}
	return append(b, '}')
}
