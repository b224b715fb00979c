package script

import (
	"fmt"
	"mime"
	"strings"

	"go.starlark.net/starlark"
)

// response is what request returns to a script: status, headers, text (and
// body, the same), truncated and json().
type response struct {
	method, path string
	status       int
	headers      *headerDict
	body         string
	truncated    bool
}

var _ starlark.HasAttrs = (*response)(nil)

func (r *response) String() string {
	return fmt.Sprintf("<response %s %s: %d>", r.method, r.path, r.status)
}
func (r *response) Type() string          { return "response" }
func (r *response) Freeze()               {} // immutable
func (r *response) Truth() starlark.Bool  { return true }
func (r *response) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: response") }

func (r *response) AttrNames() []string {
	return []string{"body", "headers", "json", "status", "text", "truncated"}
}

func (r *response) Attr(name string) (starlark.Value, error) {
	switch name {
	case "status":
		return starlark.MakeInt(r.status), nil
	case "headers":
		return r.headers, nil
	case "body", "text":
		return starlark.String(r.body), nil
	case "truncated":
		return starlark.Bool(r.truncated), nil
	case "json":
		return starlark.NewBuiltin("json", safe(r.json)), nil
	}
	return nil, nil
}

// json parses the body.
func (r *response) json(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	if r.truncated {
		return nil, fmt.Errorf("the body of %s %s was cut at script.MaxResponseBytes and cannot be parsed", r.method, r.path)
	}
	if err := chargeJSON(thread, r); err != nil {
		return nil, err
	}
	v, err := decodeJSON([]byte(r.body))
	if err != nil {
		return nil, fmt.Errorf("the body of %s %s (status %d): %w", r.method, r.path, r.status, err)
	}
	return v, nil
}

// saysJSON reports whether the Content-Type names JSON: application/json
// or a +json type.
func (r *response) saysJSON() bool {
	mt, _, err := mime.ParseMediaType(r.headers.values["content-type"])
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// summary is the response as a tool result, when a script returns one.
func (r *response) summary() map[string]any {
	return map[string]any{"status": r.status, "headers": r.headers.goMap(), "body": r.body, "truncated": r.truncated}
}

// chargeJSON charges the values decoding r's body builds.
func chargeJSON(thread *starlark.Thread, r *response) error {
	return allocate(thread, jsonBytes(r.body), func() string { return fmt.Sprintf("decoding the body of %s %s", r.method, r.path) })
}
