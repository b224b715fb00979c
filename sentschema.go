package onion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// sentForm is a derived parameters schema b as a tool outside strict mode
// sends it: every token the model reads is one paid for on every request,
// so the form leaves out what only the checker needs. An object schema's
// "additionalProperties": false goes: the properties it lists are what the
// model is told to send, and the arguments are still checked against b,
// which refuses any other property and names it in the error the model
// reads. A map's additionalProperties, the schema of its values, stays.
// A time.Duration's pattern goes where its description says what the
// pattern does (`a duration such as "90s" or "1h30m"`): 79 o200k tokens of
// regular expression for what a model reads better in words, and which
// the checker still holds the arguments to. Strings are written without
// HTML escapes ("<" is one byte, not six).
// Strict mode needs additionalProperties false, so its form is made from
// b, not from this one.
func sentForm(b []byte) ([]byte, error) {
	v, err := decodeOrdered(b)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	lean(v)
	var out bytes.Buffer
	if err := writeJSON(&out, v); err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return out.Bytes(), nil
}

// lean removes from the schema v and the schemas inside it, in place,
// "additionalProperties": false and the duration patterns their
// descriptions say in words. It walks only the keywords that hold
// schemas, so an enum value or a default that happens to look like a
// schema is left as it is.
func lean(v any) {
	s, ok := v.(*jsonObject)
	if !ok {
		return
	}
	if addl, ok := s.get("additionalProperties"); ok && addl == false {
		s.del("additionalProperties")
	}
	if p, _ := s.vals["pattern"].(string); p == durationPattern {
		if d, _ := s.vals["description"].(string); strings.Contains(d, durationDoc) {
			s.del("pattern")
		}
	}
	for _, k := range []string{"additionalProperties", "items", "prefixItems", "not", "anyOf", "oneOf", "allOf"} {
		switch sub := s.vals[k].(type) {
		case []any: // a list of schemas, or draft-04's tuple items
			for _, e := range sub {
				lean(e)
			}
		default:
			lean(sub)
		}
	}
	for _, k := range []string{"properties", "$defs", "definitions"} {
		if m, ok := s.vals[k].(*jsonObject); ok {
			for _, name := range m.keys {
				lean(m.vals[name])
			}
		}
	}
}

// writeJSON writes v, decoded by decodeOrdered, compactly, its objects'
// members in their order and its strings without HTML escapes.
func writeJSON(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case *jsonObject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeJSON(b, v.vals[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // the newline Encode ends with
	}
	return nil
}
