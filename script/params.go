package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/onionkit/onion"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// param is one parameter of a script function.
type param struct {
	name     string
	typ      string // JSON Schema type
	text     string // the description, "" if none
	required bool
	def      json.RawMessage // the default, when there is one
}

// newTool makes a tool of fn, whose docstring starts at docAt.
func newTool(cfg *config, fn *starlark.Function, docAt syntax.Position) (*onion.Tool, error) {
	name := fn.Name()
	if fn.HasVarargs() || fn.HasKwargs() {
		return nil, fmt.Errorf("%s: %s: *args and **kwargs cannot be tool parameters; name each one", fn.Position(), name)
	}
	names := make([]string, fn.NumParams())
	for i := range names {
		names[i], _ = fn.Param(i)
	}
	doc, err := parseDocstring(fn.Doc(), names)
	if err != nil {
		var le *docLineError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%s:%d: %s: %w", docAt.Filename(), int(docAt.Line)+le.line, name, le.err)
		}
		return nil, fmt.Errorf("%s: %s: %w", docAt, name, err)
	}
	if doc.description == "" {
		return nil, fmt.Errorf("%s: %s has no docstring: its first paragraph is what the model reads", fn.Position(), name)
	}
	t := &tool{cfg: cfg, fn: fn, intent: onion.Intent(doc.directives.Intent)}
	if t.intent == "" {
		t.intent = onion.Write // as for Go tools, a tool that declares nothing is a write
	}
	for i, pname := range names {
		pd := doc.params[pname]
		p := param{name: pname, text: pd.text, typ: pd.typ}
		_, pos := fn.Param(i)
		def := fn.ParamDefault(i)
		if def == nil {
			p.required = true
			if p.typ == "" {
				p.typ = "string"
			}
			t.params = append(t.params, p)
			continue
		}
		if def != starlark.None {
			dt, ok := defaultType(def)
			if !ok {
				return nil, fmt.Errorf("%s: %s: the default of %s is a %s; use a string, number, bool, list, dict or None", pos, name, pname, def.Type())
			}
			switch {
			case p.typ == "":
				p.typ = dt
			case p.typ != dt && !(p.typ == "number" && dt == "integer"):
				return nil, fmt.Errorf("%s:%d: %s: parameter %s is declared (%s) but its default is %s", docAt.Filename(), int(docAt.Line)+pd.typeLine, name, pname, p.typ, def)
			}
			g, err := toGo(def)
			if err == nil {
				p.def, err = json.Marshal(g)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s: the default of %s: %w", pos, name, pname, err)
			}
		}
		if p.typ == "" {
			p.typ = "string"
		}
		t.params = append(t.params, p)
	}

	opts := []onion.ToolOption{onion.Description(doc.description), t.intent}
	if doc.directives.Idempotent {
		opts = append(opts, onion.Idempotent())
	}
	if doc.directives.Additive {
		opts = append(opts, onion.Additive())
	}
	if doc.directives.Approve {
		opts = append(opts, onion.RequireApproval())
	}
	schema, err := t.schema()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", fn.Position(), name, err)
	}
	return onion.NewRawTool(name, schema, t.call, opts...)
}

// defaultType is the JSON type a default value gives its parameter.
func defaultType(v starlark.Value) (string, bool) {
	switch v.(type) {
	case starlark.String, starlark.Bytes:
		return "string", true
	case starlark.Int:
		return "integer", true
	case starlark.Float:
		return "number", true
	case starlark.Bool:
		return "boolean", true
	case *starlark.List, starlark.Tuple:
		return "array", true
	case *starlark.Dict:
		return "object", true
	}
	return "", false
}

// schema is the JSON Schema of the parameters, in their order in the def.
func (t *tool) schema() (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, p := range t.params {
		if i > 0 {
			b.WriteByte(',')
		}
		prop := struct {
			Type        string          `json:"type"`
			Description string          `json:"description,omitempty"`
			Default     json.RawMessage `json:"default,omitempty"`
		}{p.typ, p.text, p.def}
		k, _ := json.Marshal(p.name)
		v, err := json.Marshal(prop)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.name, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		if p.required {
			required = append(required, p.name)
		}
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes(), nil
}
