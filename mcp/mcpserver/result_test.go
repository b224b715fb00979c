package mcpserver

import (
	"encoding/json"
	"testing"
)

type status string

func TestEncode(t *testing.T) {
	for _, c := range []struct {
		name       string
		v          any
		text       string
		structured string // "" for none
	}{
		{"nil", nil, "", ""},
		{"string", "hi", "hi", ""},
		{"string that looks like JSON", `{"a":1}`, `{"a":1}`, ""},
		{"bytes", []byte("raw"), "raw", ""},
		{"named string", status("ok"), `"ok"`, ""},
		{"number", 42, "42", ""},
		{"slice", []string{"a"}, `["a"]`, ""},
		{"struct", struct {
			A int `json:"a"`
		}{1}, `{"a":1}`, `{"a":1}`},
		{"map", map[string]int{"n": 2}, `{"n":2}`, `{"n":2}`},
		{"nil map", map[string]int(nil), "null", ""},
		{"raw object", json.RawMessage(` {"x":true}`), ` {"x":true}`, `{"x":true}`},
		{"raw array", json.RawMessage(`[1]`), `[1]`, ""},
		{"raw invalid", json.RawMessage(`{oops`), `{oops`, ""},
	} {
		text, structured, err := encode(c.v)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if text != c.text || string(structured) != c.structured {
			t.Errorf("%s: (%q, %s), want (%q, %s)", c.name, text, structured, c.text, c.structured)
		}
	}
}
