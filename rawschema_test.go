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

// rawHandler answers with the arguments it got.
func rawHandler(_ context.Context, args json.RawMessage) (any, error) { return string(args), nil }

// TestNewRawToolChecksEveryKeyword holds calls to exactly the schema the
// model is sent: keywords invopop's struct does not keep (draft-07's
// dependencies and definitions, unevaluatedProperties) are checked as
// much as the ones it does.
func TestNewRawToolChecksEveryKeyword(t *testing.T) {
	for _, c := range []struct {
		name, schema, good, bad string
	}{
		{"dependentRequired", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"dependentRequired":{"a":["b"]}}`, `{"a":"x","b":"y"}`, `{"a":"x"}`},
		{"if-then", `{"type":"object","properties":{"mode":{"type":"string"},"path":{"type":"string"}},"if":{"properties":{"mode":{"const":"file"}},"required":["mode"]},"then":{"required":["path"]}}`, `{"mode":"file","path":"/x"}`, `{"mode":"file"}`},
		{"const", `{"type":"object","properties":{"v":{"const":"x"}}}`, `{"v":"x"}`, `{"v":"y"}`},
		{"prefixItems", `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]}}}`, `{"p":[1,"a"]}`, `{"p":["a",1]}`},
		{"propertyNames", `{"type":"object","propertyNames":{"pattern":"^[a-z]+$"}}`, `{"ab":1}`, `{"A1":1}`},
		{"dependencies", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"dependencies":{"a":["b"]}}`, `{"a":"x","b":"y"}`, `{"a":"x"}`},
		{"unevaluatedProperties", `{"type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":false}`, `{"a":"x"}`, `{"a":"x","z":1}`},
		{"definitions", `{"type":"object","properties":{"a":{"$ref":"#/definitions/code"}},"definitions":{"code":{"type":"string","pattern":"^[A-Z]+$"}}}`, `{"a":"AB"}`, `{"a":"ab"}`},
		{"draft4 without $schema", `{"type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`, `{"n":1}`, `{"n":0}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool, err := onion.NewRawTool("t", json.RawMessage(c.schema), rawHandler)
			if err != nil {
				t.Fatal(err)
			}
			if string(tool.Schema()) != c.schema {
				t.Errorf("schema %s, want it as given", tool.Schema())
			}
			if _, err := tool.Call(context.Background(), c.good); err != nil {
				t.Errorf("call %s: %v", c.good, err)
			}
			if _, err := tool.Call(context.Background(), c.bad); !errors.Is(err, onion.ErrInvalidArguments) {
				t.Errorf("call %s: %v; want an argument error", c.bad, err)
			}
		})
	}
}

// TestStrictTakesLegalRawSchemas builds Strict agents of raw tools whose
// schemas invopop's struct cannot hold: the strict form is made from the
// JSON itself, keeps the type lists, and states draft-04's boolean bound
// the 2020-12 way.
func TestStrictTakesLegalRawSchemas(t *testing.T) {
	for _, c := range []struct {
		name, schema, want, good, bad string
	}{
		{"types", `{"type":"object","properties":{"thought":{"type":"string"},"flag":{"type":["boolean","string"]}},"required":["thought","flag"]}`,
			`{"type":"object","properties":{"thought":{"type":"string"},"flag":{"type":["boolean","string"]}},"required":["thought","flag"],"additionalProperties":false}`,
			`{"thought":"t","flag":true}`, `{"thought":"t","flag":3}`},
		{"nullable", `{"type":"object","properties":{"note":{"type":["string","null"]}}}`,
			`{"type":"object","properties":{"note":{"anyOf":[{"type":["string","null"]},{"type":"null"}]}},"additionalProperties":false,"required":["note"]}`,
			`{"note":null}`, `{"note":1}`},
		{"draft4", `{"type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":9,"exclusiveMaximum":false}},"required":["n"]}`,
			`{"type":"object","properties":{"n":{"type":"number","maximum":9,"exclusiveMinimum":0}},"required":["n"],"additionalProperties":false}`,
			`{"n":1}`, `{"n":0}`},
		{"const and $defs", `{"type":"object","properties":{"v":{"const":"x"},"w":{"$ref":"#/$defs/w"}},"required":["v","w"],"$defs":{"w":{"type":"object","properties":{"z":{"type":"integer"}}}}}`,
			`{"type":"object","properties":{"v":{"const":"x"},"w":{"$ref":"#/$defs/w"}},"required":["v","w"],"$defs":{"w":{"type":"object","properties":{"z":{"anyOf":[{"type":"integer"},{"type":"null"}]}},"additionalProperties":false,"required":["z"]}},"additionalProperties":false}`,
			`{"v":"x","w":{"z":1}}`, `{"v":"x","w":{"z":1,"y":2}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := onion.NewRawTool("t", json.RawMessage(c.schema), rawHandler)
			if err != nil {
				t.Fatal(err)
			}
			a, err := onion.NewAgent("strict", raw, onion.Strict())
			if err != nil {
				t.Fatal(err)
			}
			tool, _ := a.Tools().Get("t")
			def := tool.Definition().Function
			if got := string(def.Parameters.(json.RawMessage)); got != c.want || !def.Strict {
				t.Errorf("strict form\n got %s\nwant %s", got, c.want)
			}
			if _, err := tool.Call(context.Background(), c.good); err != nil {
				t.Errorf("call %s: %v", c.good, err)
			}
			if _, err := tool.Call(context.Background(), c.bad); !errors.Is(err, onion.ErrInvalidArguments) {
				t.Errorf("call %s: %v; want an argument error", c.bad, err)
			}
		})
	}
}

// TestStrictRefusesRawSchemasItCannotExpress: a raw schema with a rule
// strict mode has no form for fails at NewAgent with the tool, the place
// and the keyword, never a decode error.
func TestStrictRefusesRawSchemasItCannotExpress(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"string"}},"dependentRequired":{"a":["b"]}}`, `parameters: keyword "dependentRequired"`},
		{`{"type":"object","properties":{"a":{"type":"string"}},"if":{"required":["a"]},"then":{"properties":{"a":{"const":"y"}}}}`, `parameters: keyword "if"`},
		{`{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"integer"}]}}}`, `parameters.p: keyword "prefixItems"`},
		{`{"type":"object","propertyNames":{"pattern":"^[a-z]+$"}}`, `parameters: keyword "propertyNames"`},
		{`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}}}`, `parameters.m: a free-form object`},
		{`{"type":"object","properties":{"m":{"type":["object","null"]}}}`, `parameters.m: a free-form object`},
		{`{"type":"object","properties":{"x":{}}}`, `parameters.x: it accepts any JSON value`},
		{`{"type":"object","properties":{"l":{"type":"array"}}}`, `parameters.l: an array of any JSON values`},
	} {
		raw, err := onion.NewRawTool("remote_tool", json.RawMessage(c.schema), rawHandler)
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		_, err = onion.NewAgent("strict", raw, onion.Strict())
		if err == nil || !strings.Contains(err.Error(), `tool "remote_tool"`) || !strings.Contains(err.Error(), "strict mode cannot express "+c.want) {
			t.Errorf("%s: %v; want the tool named and %q", c.schema, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "unmarshal") {
			t.Errorf("%s: a decode error: %v", c.schema, err)
		}
	}
}

// FuzzStrictRawSchema: whatever schema a server publishes, building a
// Strict agent of it returns an agent or an error, never a panic, and a
// strict form it sends is JSON.
func FuzzStrictRawSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":["string","null"]}}}`)
	f.Add(`{"type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"array","items":{"type":"object","properties":{}}}}}`)
	f.Add(`{"type":"object","properties":{"a":{"anyOf":[true,{"type":"object"}]}}}`)
	f.Add(`{"type":["object"],"properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`)
	f.Fuzz(func(t *testing.T, schema string) {
		raw, err := onion.NewRawTool("t", json.RawMessage(schema), rawHandler)
		if err != nil {
			return
		}
		a, err := onion.NewAgent("strict", raw, onion.Strict())
		if err != nil {
			return
		}
		tool, _ := a.Tools().Get("t")
		if !json.Valid(tool.Definition().Function.Parameters.(json.RawMessage)) {
			t.Errorf("strict form of %s is not JSON", schema)
		}
	})
}
