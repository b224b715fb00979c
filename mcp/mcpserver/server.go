package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/internal/outcome"
	"github.com/onionkit/onion/mcp/internal/version"
)

// DefaultName is the server name announced to MCP hosts when New is given
// no *mcp.Implementation.
const DefaultName = "onion"

// New returns an MCP server exposing the tools made of items, which are
// what onion.NewAgent takes as tools: funcs, pointers to structs (one tool
// per method), *onion.Tool and []*onion.Tool. An *mcp.Implementation among
// the items names the server and sets its version; by default it is
// DefaultName at the onion module's version. Options (Approver,
// ApprovalTimeout, ToolTimeout) go among the items too.
//
// New does not close struct instances that are io.Closer: the caller owns
// them (ServeStdio closes them when it returns).
func New(items ...any) (*mcp.Server, error) {
	s, _, err := build(items)
	return s, err
}

// build is New, also returning the options found among the items.
func build(items []any) (*mcp.Server, config, error) {
	cfg := defaultConfig()
	impl := &mcp.Implementation{Name: DefaultName, Version: version.Onion()}
	var tools []*onion.Tool
	seen := make(map[string]bool)
	for i, item := range items {
		switch it := item.(type) {
		case *mcp.Implementation:
			if it == nil {
				return nil, cfg, fmt.Errorf("mcpserver: item %d is a nil *mcp.Implementation", i)
			}
			impl = it
			continue
		case Option:
			it.apply(&cfg)
			continue
		}
		ts, err := onion.ToolsFrom(item)
		if err != nil {
			return nil, cfg, fmt.Errorf("mcpserver: item %d (%T): %w", i, item, err)
		}
		for _, t := range ts {
			if seen[t.Name()] {
				return nil, cfg, fmt.Errorf("mcpserver: two tools are named %q: rename one with onion.Name", t.Name())
			}
			seen[t.Name()] = true
			tools = append(tools, t)
		}
	}
	if len(tools) == 0 {
		return nil, cfg, errNoTools
	}
	s := mcp.NewServer(impl, nil)
	g := newGate(cfg)
	for _, t := range tools {
		if err := addTool(s, t, g, cfg.toolTimeout); err != nil {
			return nil, cfg, err
		}
	}
	return s, cfg, nil
}

// addTool registers t with a raw handler: the SDK's typed AddTool would
// infer a second schema from Go types (and panics on invopop-style tags),
// while onion already has the schema the agent sends.
func addTool(s *mcp.Server, t *onion.Tool, g *gate, timeout time.Duration) (err error) {
	// Server.AddTool reports a schema it cannot use by panicking.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mcpserver: tool %q: %v", t.Name(), r)
		}
	}()
	schema := t.Schema()
	if !json.Valid(schema) {
		return fmt.Errorf("mcpserver: tool %q: parameter schema is not valid JSON", t.Name())
	}
	out, wrap, err := outputSchema(t)
	if err != nil {
		return fmt.Errorf("mcpserver: %w", err)
	}
	mt := &mcp.Tool{
		Name:        t.Name(),
		Description: t.Description(),
		InputSchema: json.RawMessage(schema),
		Annotations: annotations(t),
		Meta:        mcp.Meta{outcome.IntentKey: string(t.Intent())},
	}
	if t.NeedsApproval(context.Background(), onion.Call{Name: t.Name(), Intent: t.Intent(), Arguments: json.RawMessage("{}")}) {
		mt.Meta[outcome.ApprovalKey] = "required"
	}
	if out != nil {
		mt.OutputSchema = out
	}
	s.AddTool(mt, handler(t, wrap, g, timeout))
	return nil
}

// outputSchema is the outputSchema of t: its Go result's schema when that
// is an object (a struct), else an object wrapping the result as
// {"result": …}, in which case wrap is true. Tools whose result is text, or
// unknown until run time, declare none.
func outputSchema(t *onion.Tool) (schema json.RawMessage, wrap bool, err error) {
	rt := t.ResultType()
	if rt == nil || rt.Kind() == reflect.String {
		return nil, false, nil
	}
	s, err := t.OutputSchema()
	if err != nil || s == nil { // none: an image the peer is shown
		return nil, false, err
	}
	// The schema of an any result is true, which allows every value.
	anything := bytes.Equal(bytes.TrimSpace(s), []byte("true"))
	var head struct {
		Type string `json:"type"`
	}
	if !anything {
		if err := json.Unmarshal(s, &head); err != nil {
			return nil, false, fmt.Errorf("tool %q: output schema: %w", t.Name(), err)
		}
	}
	if rt.Kind() == reflect.Struct && head.Type == "object" {
		return s, false, nil
	}
	result := s
	switch rt.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		// These encode as null when nil, which true allows already.
		if !anything {
			result = json.RawMessage(`{"anyOf":[` + string(s) + `,{"type":"null"}]}`)
		}
	}
	wrapped := `{"type":"object","properties":{"result":` + string(result) + `},"required":["result"],"additionalProperties":false}`
	return json.RawMessage(wrapped), true, nil
}

// annotations turns a tool's intent into MCP's hints. The hints other than
// readOnlyHint only mean something for tools that change the world, but
// idempotentHint is sent as the tool declares it either way. MCP reads
// destructiveHint false as "only additive updates", so a write is
// destructive unless it says it only adds (onion.Additive): write_file
// replaces a file, a shell command may do anything.
func annotations(t *onion.Tool) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{IdempotentHint: t.Idempotent()}
	if t.Intent() == onion.Read {
		a.ReadOnlyHint = true
		return a
	}
	a.DestructiveHint = new(t.Intent() == onion.Delete || !t.Additive())
	return a
}

// errNoTools reports a server with nothing to serve.
var errNoTools = errors.New("mcpserver: no tools given: pass funcs, struct pointers or *onion.Tool values")
