package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/invopop/jsonschema"
)

// This file is the tools that are not derived from a Go func's source:
// raw tools, with a ready schema and a handler of raw JSON, and typed
// tools, whose In and Out types give the schemas.

// NewRawTool makes a tool of a ready JSON Schema and a handler that
// receives the raw JSON arguments, already validated against the schema.
// It is how tools whose shape is only known at run time are built (a
// remote MCP server's tools, script tools). The handler's result is sent
// like a Go tool's: a string as it is, anything else as JSON.
func NewRawTool(name string, schema json.RawMessage, fn func(ctx context.Context, args json.RawMessage) (any, error), opts ...ToolOption) (*Tool, error) {
	if fn == nil {
		return nil, fmt.Errorf("onion.NewRawTool %q: nil handler", name)
	}
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var s jsonschema.Schema
	unmarshalErr := json.Unmarshal(schema, &s)
	if unmarshalErr != nil {
		loose, err := looseSchema(schema)
		if err != nil {
			return nil, fmt.Errorf("onion.NewRawTool %q: schema is not a JSON Schema: %w", name, unmarshalErr)
		}
		s = *loose
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("onion.NewRawTool %q: the parameters schema must have type object, got %q", name, s.Type)
	}
	if s.Properties == nil {
		s.Properties = jsonschema.NewProperties()
	}
	params, err := rawParams(schema, &s)
	if err != nil {
		return nil, fmt.Errorf("onion.NewRawTool %q: %w", name, err)
	}
	cfg := toolConfig{name: name}
	for _, o := range opts {
		if m, ok := o.(methodOption); ok {
			return nil, fmt.Errorf("onion.NewRawTool %q: onion.Method(%q) applies to methods; give the options themselves", name, m.name)
		}
		o.applyTool(&cfg)
	}
	t, err := newTool(cfg, params, "raw tool "+strconv.Quote(name))
	if err != nil {
		return nil, err
	}
	t.signature = t.name + "(args object)"
	t.invoke = func(ctx context.Context, args string) (any, error) {
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		if err := params.explain(ctx, t.name, args, nil); err != nil {
			return nil, err
		}
		return fn(ctx, json.RawMessage(args))
	}
	return t, nil
}

// NewTypedTool makes a tool of a func whose argument struct and result are
// known at compile time. It derives the same schema, name and description
// as NewTool, and calls fn without reflection: the arguments decode
// straight into an In. In must be a struct whose fields are the
// parameters.
func NewTypedTool[In, Out any](fn func(context.Context, In) (Out, error), opts ...ToolOption) (*Tool, error) {
	if fn == nil {
		return nil, errors.New("onion.NewTypedTool: nil func")
	}
	if in := reflect.TypeFor[In](); !isArgStruct(in) || in.Kind() != reflect.Struct {
		return nil, fmt.Errorf("onion.NewTypedTool: the argument %s must be a struct whose fields are the parameters", in)
	}
	t, err := NewTool(fn, opts...)
	if err != nil {
		return nil, err
	}
	params, name := t.params, t.name
	// The arguments are decoded into a pooled In, which fn gets a copy of.
	ins := sync.Pool{New: func() any { return new(In) }}
	t.invoke = func(ctx context.Context, args string) (any, error) {
		p := ins.Get().(*In)
		err := params.decodeInto(ctx, name, args, unsafe.Pointer(p))
		in := *p
		*p = *new(In)
		ins.Put(p)
		if err != nil {
			return nil, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return t, nil
}
