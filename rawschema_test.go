package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/onionkit/onion"
)

// TestNewRawToolTakesLegalSchemas gives NewRawTool schemas that invopop's
// struct cannot hold but JSON Schema allows: each is kept byte for byte,
// validates the arguments, and lists its parameters in errors.
func TestNewRawToolTakesLegalSchemas(t *testing.T) {
	for _, c := range []struct {
		name, schema, good, bad, listing string
	}{
		{"types", `{"type":"object","properties":{"flag":{"type":["boolean","string"]}},"required":["flag"]}`, `{"flag":"yes"}`, `{"flag":3}`, "flag (boolean or string, required)"},
		{"nullable", `{"type":"object","properties":{"note":{"type":["string","null"]},"n":{"type":"integer"}}}`, `{"note":null}`, `{"note":1}`, "note (string or null), n (integer)"},
		{"draft4", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`, `{"n":1}`, `{"n":0}`, "n (number)"},
		{"nested", `{"type":"object","properties":{"fields":{"type":"array","items":{"type":"object","properties":{"value":{"type":["string","boolean"]}}}}}}`, `{"fields":[{"value":true}]}`, `{"fields":[{"value":1}]}`, "fields (array"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool, err := onion.NewRawTool("t", json.RawMessage(c.schema), func(_ context.Context, args json.RawMessage) (any, error) { return string(args), nil })
			if err != nil {
				t.Fatal(err)
			}
			if string(tool.Schema()) != c.schema {
				t.Errorf("schema %s, want it as given", tool.Schema())
			}
			if out, err := tool.Call(context.Background(), c.good); err != nil || out != c.good {
				t.Errorf("call %s = %q, %v", c.good, out, err)
			}
			_, err = tool.Call(context.Background(), c.bad)
			var argErr *onion.ArgumentError
			if !errors.As(err, &argErr) || !strings.Contains(argErr.Error(), c.listing) {
				t.Errorf("call %s: %v; want an argument error listing %q", c.bad, err, c.listing)
			}
		})
	}
}
