package onion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/invopop/jsonschema"
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

// looseParamSchema is the paramSchema of a raw schema that only
// looseSchema could read (s): the validator compiles the schema as it is,
// since s holds too little of it to check anything.
func looseParamSchema(raw json.RawMessage, s *jsonschema.Schema) (*paramSchema, error) {
	chk, err := newChecker(raw, s, nil)
	if err != nil {
		return nil, err
	}
	return &paramSchema{schema: s, json: raw, listing: listParams(s), checker: chk}, nil
}
