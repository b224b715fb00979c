package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/onionkit/onion"
)

type status string

type point struct {
	X int `json:"x"`
}

// TestStructured derives structuredContent from the very text Tool.Call
// gives, for each kind of result.
func TestStructured(t *testing.T) {
	raw := func(v any) any {
		return func(context.Context, json.RawMessage) (any, error) { return v, nil }
	}
	for _, c := range []struct {
		name       string
		fn         any    // a func for onion.NewTool, or a raw handler's result
		structured string // "" for none
	}{
		{"string", func() string { return `{"a":1}` }, ""},
		{"named string", func() status { return "ok" }, ""},
		{"number", func() int { return 42 }, `{"result":42}`},
		{"slice", func() []string { return []string{"a"} }, `{"result":["a"]}`},
		{"struct", func() point { return point{1} }, `{"x":1}`},
		{"map", func() map[string]int { return map[string]int{"n": 2} }, `{"result":{"n":2}}`},
		{"nil map", func() map[string]int { return nil }, `{"result":null}`},
		{"bytes", func() []byte { return []byte("raw") }, ""},
		{"string behind any", func() any { return "hello" }, ""},
		{"html", func() point { return point{1} }, `{"x":1}`},
		{"raw object", raw(json.RawMessage(` {"x":true}`)), `{"x":true}`},
		{"raw map", raw(map[string]string{"k": "<b>&"}), `{"k":"<b>&"}`},
		{"raw array", raw(json.RawMessage(`[1]`)), ""},
		{"raw invalid", raw(json.RawMessage(`{oops`)), ""},
		{"raw nil", raw(nil), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tool *onion.Tool
			var err error
			if h, ok := c.fn.(func(context.Context, json.RawMessage) (any, error)); ok {
				tool, err = onion.NewRawTool("t", nil, h)
			} else {
				tool, err = onion.NewTool(c.fn, onion.Name("t"))
			}
			if err != nil {
				t.Fatal(err)
			}
			_, wrap, err := outputSchema(tool)
			if err != nil {
				t.Fatal(err)
			}
			text, err := tool.Call(context.Background(), "{}")
			if err != nil {
				t.Fatal(err)
			}
			if got := structured(tool, text, wrap); string(got) != c.structured {
				t.Errorf("structured(%q) = %s, want %s", text, got, c.structured)
			}
		})
	}
}
