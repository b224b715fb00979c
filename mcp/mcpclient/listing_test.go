package mcpclient

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/onionkit/onion"
)

// FuzzInputSchema feeds inputSchema what a server could send: it never
// panics, and a schema it keeps is valid JSON that NewRawTool takes.
func FuzzInputSchema(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
		`{"properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"b":{"type":["boolean","string"]}}}`,
		`{}`, ` { } `, `[]`, `null`, `"x"`, `{"type":"strnig"}`, `{"type":"object","$ref":"http://example.com/s.json"}`,
		`{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer"}}}`,
		`{"type":"object","properties":{"t":{"type":"string","pattern":"^(?=a)(a+)+$"}}}`, `{"properties":{"t":{"pattern":"(?<"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		schema, err := inputSchema(raw, nil)
		if err != nil {
			return
		}
		if !json.Valid(schema) {
			t.Fatalf("inputSchema(%q) = %q, not JSON", raw, schema)
		}
		_, err = onion.NewRawTool("t", schema, func(context.Context, json.RawMessage) (any, error) { return nil, nil })
		if err != nil {
			t.Logf("inputSchema kept %q, which NewRawTool refuses: %v", schema, err)
		}
	})
}

// TestInputSchemaFollowsNoRef refuses a schema that refers to a local
// file, which the client would otherwise read (or block on).
func TestInputSchemaFollowsNoRef(t *testing.T) {
	for _, ref := range []string{"file:///etc/hostname", "file:///dev/zero", "http://127.0.0.1:1/s.json"} {
		if _, err := inputSchema(json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"`+ref+`"}}}`), nil); err == nil {
			t.Errorf("a schema referring to %s was kept", ref)
		}
	}
	if _, err := inputSchema(json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer"}}}`), nil); err != nil {
		t.Errorf("a schema with a local $ref: %v", err)
	}
}
