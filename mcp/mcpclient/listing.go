package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/dlclark/regexp2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// A LeftOutError says why a tool of a server is not offered to the model:
// its schema cannot be used, or it cannot be called the way mcpclient
// calls tools. The rest of the server's tools are offered all the same.
type LeftOutError struct {
	Server string // the server, as error messages name it
	Tool   string // the tool's name on the server
	Reason string // why it is left out
}

func (e *LeftOutError) Error() string {
	return fmt.Sprintf("mcpclient: tool %q of %s is left out: %s", e.Tool, e.Server, e.Reason)
}

// rawTools records the tools/list answers as the server sent them: the SDK
// hands tools over decoded into its own struct, which reorders the input
// schema's keys and drops fields it does not know, such as execution.
type rawTools struct {
	mu      sync.Mutex // guards pending and tools
	pending map[jsonrpc.ID]bool
	tools   map[string]rawTool
}

// rawTool is what mcpclient reads of a tool as the server sent it.
type rawTool struct {
	InputSchema json.RawMessage `json:"inputSchema"`
	Execution   struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

func (r *rawTools) get(name string) (rawTool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tools[name]
	return t, ok
}

// recordingTransport is a transport whose connection records the tools/list
// answers in raw.
type recordingTransport struct {
	mcp.Transport
	raw *rawTools
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, raw: t.raw}, nil
}

type recordingConn struct {
	mcp.Connection
	raw *rawTools
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.raw.mu.Lock()
		c.raw.pending[req.ID] = true
		c.raw.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok {
		return msg, err
	}
	c.raw.mu.Lock()
	defer c.raw.mu.Unlock()
	if !c.raw.pending[resp.ID] {
		return msg, err
	}
	delete(c.raw.pending, resp.ID)
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(resp.Result, &list) != nil {
		return msg, err
	}
	for _, raw := range list.Tools {
		var head struct {
			Name string `json:"name"`
			rawTool
		}
		if json.Unmarshal(raw, &head) == nil {
			c.raw.tools[head.Name] = head.rawTool
		}
	}
	return msg, err
}

// Draft URIs that a schema without "$schema" is tried against when it is
// not a valid 2020-12 schema (MCP's default dialect), oldest last.
var olderDrafts = []struct {
	draft *santhosh.Draft
	uri   string
}{
	{santhosh.Draft7, "http://json-schema.org/draft-07/schema#"},
	{santhosh.Draft4, "http://json-schema.org/draft-04/schema#"},
}

// inputSchema is the server's input schema as onion should hold it: as the
// server sent it, with "type": "object" added when missing (MCP requires
// it, onion insists on it), and with the "$schema" of the draft it was
// written for when it names none and is valid only under an older draft
// (draft-04's boolean exclusiveMinimum), so that onion's validator reads it
// the same way. A schema no validator accepts is an error saying why.
func inputSchema(raw json.RawMessage, decoded any) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		if decoded == nil {
			return json.RawMessage(`{"type":"object","properties":{}}`), nil
		}
		b, err := json.Marshal(decoded)
		if err != nil {
			return nil, fmt.Errorf("encode input schema: %w", err)
		}
		raw = b
	}
	var head map[string]json.RawMessage
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("the input schema is not a JSON object: %w", err)
	}
	if _, ok := head["type"]; !ok {
		raw = prepend(raw, `"type":"object"`)
	}
	err := compile(raw, nil)
	if err == nil {
		return raw, nil
	}
	if _, ok := head["$schema"]; !ok {
		for _, d := range olderDrafts {
			if compile(raw, d.draft) == nil {
				return prepend(raw, `"$schema":`+strconvQuote(d.uri)), nil
			}
		}
	}
	return nil, fmt.Errorf("its input schema is not valid JSON Schema: %s", oneLine(err.Error()))
}

// compile compiles schema as onion's validator will, under draft when the
// schema names none.
func compile(schema json.RawMessage, draft *santhosh.Draft) error {
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return err
	}
	c := santhosh.NewCompiler()
	// A server's $ref to a file or URL is not followed: it could make the
	// client read local files, or block on one such as a FIFO.
	c.UseLoader(santhosh.SchemeURLLoader{})
	if draft != nil {
		c.DefaultDraft(draft)
	}
	c.AssertFormat()
	c.UseRegexpEngine(patternSyntax)
	if err := c.AddResource("tool.json", doc); err != nil {
		return err
	}
	_, err = c.Compile("tool.json")
	return err
}

// patternSyntax takes the patterns onion's validator takes: Go's syntax, or
// else ECMA-262's (lookaround, backreferences), as JSON Schema defines
// patterns. The schema compiled here is never matched against: onion
// compiles it again for each tool, and there matches of the patterns
// that need backtracking are bounded in time and by the call's context.
func patternSyntax(pattern string) (santhosh.Regexp, error) {
	if re, err := regexp.Compile(pattern); err == nil {
		return re, nil
	}
	if _, err := regexp2.Compile(pattern, regexp2.ECMAScript); err != nil {
		return nil, fmt.Errorf("pattern %q is not an ECMA-262 regular expression: %w", pattern, err)
	}
	return unmatched(pattern), nil
}

// unmatched is a pattern only checked for its syntax.
type unmatched string

func (unmatched) MatchString(string) bool { return false }
func (p unmatched) String() string        { return string(p) }

// prepend adds member ("key":value) at the start of the JSON object obj,
// keeping the rest byte for byte.
func prepend(obj json.RawMessage, member string) json.RawMessage {
	rest := bytes.TrimSpace(obj[1:])
	out := []byte("{" + member)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// oneLine flattens the validator's indented, many-line message, capped.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}
