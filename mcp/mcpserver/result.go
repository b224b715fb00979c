package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
)

// handler runs t for one tools/call. Every failure of the tool is an
// isError result, never a protocol error: the peer's model must read it.
// Calls that need approval pass g first.
func handler(t *onion.Tool, wrap bool, g *gate) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		// Tool.Run already turns a panic of the tool into a *PanicError; this
		// catches the rest, such as a result whose MarshalJSON panics.
		defer func() {
			if r := recover(); r != nil {
				res = errorResult(&onion.PanicError{Tool: t.Name(), Value: r, Stack: debug.Stack()})
			}
		}()
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		if res := g.check(ctx, req, t, raw); res != nil {
			return res, nil
		}
		v, err := run(ctx, t, raw)
		if err != nil {
			return errorResult(err), nil
		}
		text, structured, err := encode(v)
		if err != nil {
			return errorResult(fmt.Errorf("tool %q: %w", t.Name(), err)), nil
		}
		if wrap {
			structured = json.RawMessage(`{"result":` + text + `}`)
		}
		res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		if structured != nil {
			res.StructuredContent = structured
		}
		return res, nil
	}
}

// run calls t with the raw arguments of a tools/call. It goes through
// Tool.Run rather than Tool.Call so that the Go result is at hand to decide
// on structuredContent; numbers are decoded as json.Number so that they
// reach the tool digit for digit. Arguments that are not a JSON object go
// through Tool.Call, whose validation words the error as the loop does.
func run(ctx context.Context, t *onion.Tool, raw json.RawMessage) (any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return t.Run(ctx, nil)
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil || args == nil || dec.More() {
		return t.Call(ctx, string(raw))
	}
	return t.Run(ctx, args)
}

// encode returns the text the model would read for the Go result v (a
// string as it is, anything else as JSON, as Tool.Call does) and, when v is
// structured and encodes as a JSON object, that object. A result that is
// not an object is wrapped by the handler, as its output schema says.
func encode(v any) (string, json.RawMessage, error) {
	switch r := v.(type) {
	case nil:
		return "", nil, nil
	case string:
		return r, nil, nil
	case []byte:
		return string(r), nil, nil
	case json.RawMessage:
		return string(r), object(r), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", nil, fmt.Errorf("encode result as JSON: %w", err)
	}
	return string(b), object(b), nil
}

// object returns b if it is a JSON object, else nil.
func object(b []byte) json.RawMessage {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return nil
	}
	return json.RawMessage(t)
}

// errorResult is the isError result carrying err's text, which is what
// onion's loop tells the model about the same failure.
func errorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}},
		IsError: true,
	}
}
