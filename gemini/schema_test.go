package gemini

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

func TestConvertSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"kept as it is", `{"type":"object","properties":{"a":{"type":"integer","enum":[1,2,3],"minimum":1}},"required":["a"],"additionalProperties":false}`,
			`{"additionalProperties":false,"properties":{"a":{"enum":[1,2,3],"minimum":1,"type":"integer"}},"required":["a"],"type":"object"}`},
		{"the order of properties", `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"},"m":{"type":"string"}}}`,
			`{"properties":{"a":{"type":"string"},"m":{"type":"string"},"z":{"type":"string"}},"propertyOrdering":["z","a","m"],"type":"object"}`},
		{"an order given stays", `{"type":"object","properties":{"z":{},"a":{}},"propertyOrdering":["a","z"]}`,
			`{"properties":{"a":{},"z":{}},"propertyOrdering":["a","z"],"type":"object"}`},
		{"annotations dropped", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"integer","default":1,"examples":[2],"deprecated":false}`,
			`{"type":"integer"}`},
		{"narrowing told in the description", `{"type":"string","description":"The code.","pattern":"^[A-Z]{3}$","minLength":3,"maxLength":3}`,
			`{"description":"The code (matching the regular expression ^[A-Z]{3}$; 3 to 3 characters)","type":"string"}`},
		{"an exclusive bound keeps a bound", `{"type":"number","exclusiveMinimum":0,"multipleOf":0.5}`,
			`{"description":"greater than 0; a multiple of 0.5","minimum":0,"type":"number"}`},
		{"a draft-04 exclusive bound", `{"type":"number","maximum":10,"exclusiveMaximum":true}`,
			`{"description":"less than 10","maximum":10,"type":"number"}`},
		{"const is a one-value enum", `{"const":"on"}`, `{"enum":["on"]}`},
		{"a ref beside other keywords", `{"$defs":{"P":{"type":"integer"}},"type":"object","properties":{"p":{"$ref":"#/$defs/P","description":"priority"}}}`,
			`{"$defs":{"P":{"type":"integer"}},"properties":{"p":{"anyOf":[{"$ref":"#/$defs/P"}],"description":"priority"}},"type":"object"}`},
		{"definitions are $defs", `{"definitions":{"P":{"type":"integer"}},"$ref":"#/definitions/P"}`,
			`{"$defs":{"P":{"type":"integer"}},"$ref":"#/$defs/P"}`},
		{"a tuple of draft-04", `{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`,
			`{"prefixItems":[{"type":"string"},{"type":"integer"}],"type":"array"}`},
		{"any value", `{"type":"object","properties":{"raw":true,"x":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			`{"properties":{"raw":{},"x":{"anyOf":[{"type":"string"},{"type":"null"}]}},"propertyOrdering":["raw","x"],"type":"object"}`},
		{"a map", `{"type":"object","additionalProperties":{"type":"string"}}`, `{"additionalProperties":{"type":"string"},"type":"object"}`},
		{"a type list", `{"type":["string","null"]}`, `{"type":["string","null"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := convertSchema([]byte(tt.in), "parameters")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(v)
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestConvertSchemaRefuses(t *testing.T) {
	tests := []struct {
		name, in, path, keyword string
	}{
		{"allOf", `{"type":"object","allOf":[{"required":["a"]}]}`, "parameters", "allOf"},
		{"deep", `{"type":"object","properties":{"when":{"type":"object","properties":{"x":{"if":{"type":"string"},"then":{"minLength":1}}}}}}`,
			"parameters.properties.when.properties.x", "if"},
		{"in a list", `{"anyOf":[{"type":"string"},{"not":{"type":"null"}}]}`, "parameters.anyOf[1]", "not"},
		{"an unknown keyword", `{"type":"string","nullable":true}`, "parameters", "nullable"},
		{"patternProperties", `{"type":"object","patternProperties":{"^x-":{"type":"string"}}}`, "parameters", "patternProperties"},
		{"an enum of booleans", `{"enum":[true,false]}`, "parameters", "enum"},
		{"a schema nothing fits", `{"type":"object","properties":{"never":false}}`, "parameters.properties.never", "false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := convertSchema([]byte(tt.in), "parameters")
			var se *SchemaError
			if !errors.As(err, &se) || se.Path != tt.path || se.Keyword != tt.keyword {
				t.Fatalf("error %v, want keyword %q at %s", err, tt.keyword, tt.path)
			}
			if !strings.Contains(err.Error(), `keyword "`+tt.keyword+`"`) {
				t.Errorf("error %q does not name the keyword", err)
			}
		})
	}
	deep := strings.Repeat(`{"items":`, 100) + "{}" + strings.Repeat("}", 100)
	if _, err := convertSchema([]byte(deep), "parameters"); err == nil || !strings.Contains(err.Error(), "levels deep") {
		t.Errorf("a deep schema: %v", err)
	}
	if _, err := convertSchema([]byte(`{"type":"string"} {}`), "parameters"); err == nil {
		t.Errorf("two schemas: no error")
	}
}

func TestCheckTools(t *testing.T) {
	m, err := New("gemini-2.5-flash", BaseURL("http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	ok := loop.ToolDef{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	if err := m.CheckTools([]loop.ToolDef{ok, {Name: "no_params"}}); err != nil {
		t.Errorf("CheckTools: %v", err)
	}
	for _, bad := range []loop.ToolDef{
		{Name: "has space", Parameters: ok.Parameters},
		{Name: strings.Repeat("a", 129), Parameters: ok.Parameters},
		{Name: "9lives", Parameters: ok.Parameters},
		{Name: "either", Parameters: json.RawMessage(`{"oneOf":[{"type":"string"}],"allOf":[]}`)},
	} {
		err := m.CheckTools([]loop.ToolDef{ok, bad})
		if err == nil || !strings.Contains(err.Error(), "gemini: tool ") {
			t.Errorf("tool %.20q: %v", bad.Name, err)
		}
	}
}
