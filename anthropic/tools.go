package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/onionkit/onion/loop"
)

// This file checks an agent's tools against what the Messages API takes
// of a tool (loop.ToolChecker), so that a tool it would refuse fails when
// the agent is made, not at its first request. The API takes any JSON
// Schema as input_schema, but for its top: an object, without oneOf,
// anyOf or allOf there; and names of letters, digits, _ and -.

// maxToolName is the longest tool name the Messages API takes.
const maxToolName = 128

// CheckTools reports the first tool the Messages API would refuse, naming
// the tool and what is wrong.
func (m *Model) CheckTools(defs []loop.ToolDef) error {
	for _, d := range defs {
		if err := checkTool(d); err != nil {
			return fmt.Errorf("anthropic: tool %q: %w", d.Name, err)
		}
	}
	return nil
}

func checkTool(d loop.ToolDef) error {
	if d.Name == "" || len(d.Name) > maxToolName {
		return fmt.Errorf("the Messages API takes tool names of 1 to %d characters", maxToolName)
	}
	for i := 0; i < len(d.Name); i++ {
		if !idByte(d.Name[i]) {
			return fmt.Errorf("the Messages API takes tool names of letters, digits, _ and -, not %q", d.Name[i])
		}
	}
	schema := bytes.TrimSpace(d.Parameters)
	if len(schema) == 0 || string(schema) == "null" {
		return nil // sent as an object without properties
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil {
		return fmt.Errorf("its parameters are not a JSON Schema object: %w", err)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := top[k]; ok {
			return fmt.Errorf("the keyword %s at the top of its input_schema: the Messages API does not take it there; take an object with the alternatives in a property", k)
		}
	}
	var typ string
	if err := json.Unmarshal(top["type"], &typ); err != nil || typ != "object" {
		return fmt.Errorf(`the keyword type of its input_schema is %s: the Messages API takes only "object"`, orNothing(top["type"]))
	}
	return nil
}

func orNothing(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "missing"
	}
	return string(raw)
}
