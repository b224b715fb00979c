package onion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// looseSchema reads what NewRawTool needs of a parameters schema that
// invopop's struct cannot hold although it is legal JSON Schema, such as a
// list of types ("type": ["string", "null"]) or draft-04's boolean
// exclusiveMinimum: the type, the parameters in their order and which are
// required, for the listing in error messages. The schema itself is kept
// and sent as it is.
func looseSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	var top struct {
		Type       any             `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	s := &jsonschema.Schema{Type: looseType(top.Type), Required: top.Required, Properties: jsonschema.NewProperties()}
	if len(top.Properties) == 0 || string(top.Properties) == "null" {
		return s, nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("properties is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("properties: %w", err)
		}
		key, _ := tok.(string)
		var prop json.RawMessage
		if err := dec.Decode(&prop); err != nil {
			return nil, fmt.Errorf("property %q: %w", key, err)
		}
		ps := new(jsonschema.Schema)
		if json.Unmarshal(prop, ps) != nil {
			var head struct {
				Type        any    `json:"type"`
				Description string `json:"description"`
			}
			if err := json.Unmarshal(prop, &head); err != nil {
				return nil, fmt.Errorf("property %q: %w", key, err)
			}
			ps = &jsonschema.Schema{Type: looseType(head.Type), Description: head.Description}
		}
		s.Properties.Set(key, ps)
	}
	return s, nil
}

// looseType names a "type" keyword's value: a type, or a list of them as
// "string or null". A list holding "object" counts as an object, which is
// what NewRawTool asks of the parameters.
func looseType(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var names []string
		for _, n := range t {
			if s, ok := n.(string); ok {
				if s == "object" {
					return "object"
				}
				names = append(names, s)
			}
		}
		return strings.Join(names, " or ")
	}
	return ""
}

// rawParams is the paramSchema of a raw schema: its listing read from s
// (invopop's struct, or what looseSchema could read), its checker compiled
// from raw itself, byte for byte what the model is sent, so that no
// keyword s cannot hold is dropped from the check.
func rawParams(raw json.RawMessage, s *jsonschema.Schema) (*paramSchema, error) {
	raw = append(json.RawMessage(nil), raw...)
	chk, err := newChecker(raw, s, nil)
	if err != nil {
		return nil, err
	}
	return &paramSchema{schema: s, json: raw, listing: listParams(s), checker: chk}, nil
}

// compileRaw compiles a raw schema. One that names no draft is read as
// 2020-12 and, if it is not valid there, as draft-07 or draft-04 (whose
// exclusiveMinimum is a boolean), which servers still publish.
func compileRaw(b []byte, ps *patterns) (*santhosh.Schema, error) {
	v, err := compileSchema(b, ps)
	if err == nil {
		return v, nil
	}
	var head struct {
		Schema *string `json:"$schema"`
	}
	if json.Unmarshal(b, &head) != nil || head.Schema != nil {
		return nil, err
	}
	for _, d := range []*santhosh.Draft{santhosh.Draft7, santhosh.Draft4} {
		if v, derr := compileDraft(b, d, ps); derr == nil {
			return v, nil
		}
	}
	return nil, err
}

// jsonObject is a JSON object that keeps its members in order, so that a
// schema rewritten by onion (its strict form) lists the properties in the
// order its author gave them: the order a model fills them in.
type jsonObject struct {
	keys []string
	vals map[string]any
}

func (o *jsonObject) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// set replaces the value of k in place, or adds k at the end.
func (o *jsonObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *jsonObject) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(s string) bool { return s == k })
}

// MarshalJSON writes the members in their order.
func (o *jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// maxSchemaDepth bounds the nesting of a schema onion rewrites: schemas
// come from remote servers too.
const maxSchemaDepth = 256

// decodeOrdered decodes a JSON document, its objects as *jsonObject, its
// numbers as json.Number (kept as written).
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
		o := &jsonObject{vals: map[string]any{}}
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
			o.set(k, v)
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
