package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/internal/version"
)

// Tools connects to the MCP server at the other end of transport, lists
// its tools (every page) and returns them as onion tools sharing one
// session; ctx bounds the connection and the listing only. Close the
// session with onion.Agent.Close, or by closing any tool's resource.
func Tools(ctx context.Context, transport mcp.Transport) ([]*onion.Tool, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "onion", Version: version.Onion()}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: connect: %w", err)
	}
	s := newSession(cs)
	tools, err := s.tools(ctx)
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return tools, nil
}

// Command starts the program name with args as a stdio MCP server and
// returns its tools (see Tools). The program runs until the session is
// closed, whatever becomes of ctx; its stderr goes to this process's.
func Command(ctx context.Context, name string, args ...string) ([]*onion.Tool, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	tools, err := Tools(ctx, &mcp.CommandTransport{Command: cmd})
	if err != nil {
		return nil, fmt.Errorf("mcpclient: %s: %w", name, err)
	}
	return tools, nil
}

// HTTP connects to the MCP server at url over streamable HTTP and returns
// its tools (see Tools).
func HTTP(ctx context.Context, url string) ([]*onion.Tool, error) {
	tools, err := Tools(ctx, &mcp.StreamableClientTransport{Endpoint: url})
	if err != nil {
		return nil, fmt.Errorf("mcpclient: %s: %w", url, err)
	}
	return tools, nil
}

// session is one connection to a server, shared by all its tools and
// closed once.
type session struct {
	cs     *mcp.ClientSession
	server string        // the server's name, for error messages
	gone   chan struct{} // closed when the connection has ended
	broken atomic.Bool   // a call saw the connection fail
	once   sync.Once
}

func newSession(cs *mcp.ClientSession) *session {
	s := &session{cs: cs, server: "the MCP server", gone: make(chan struct{})}
	if res := cs.InitializeResult(); res != nil && res.ServerInfo != nil && res.ServerInfo.Name != "" {
		s.server = "MCP server " + strconv.Quote(res.ServerInfo.Name)
	}
	// Owned by the session: it ends when the connection does, at the latest
	// in Close, which waits for it.
	go func() {
		_ = cs.Wait() // its error is Close's, or was the broken calls'
		close(s.gone)
	}()
	return s
}

// Close ends the session. Only the first call does anything. A server that
// already went away is not reported again: the calls it broke said so.
func (s *session) Close() error {
	var err error
	s.once.Do(func() {
		dead := s.broken.Load()
		select {
		case <-s.gone:
			dead = true
		default:
		}
		err = s.cs.Close()
		<-s.gone
		if err != nil && !dead {
			err = fmt.Errorf("mcpclient: close session with %s: %w", s.server, err)
		} else {
			err = nil
		}
	})
	return err
}

// tools lists the server's tools and wraps each.
func (s *session) tools(ctx context.Context) ([]*onion.Tool, error) {
	var out []*onion.Tool
	names := make(map[string]bool)
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcpclient: list tools of %s: %w", s.server, err)
		}
		ot, err := s.wrap(t, uniqueName(t.Name, names))
		if err != nil {
			return nil, err
		}
		out = append(out, ot)
	}
	return out, nil
}

// wrap makes the onion tool, called name, of the server's tool t.
func (s *session) wrap(t *mcp.Tool, name string) (*onion.Tool, error) {
	schema, err := inputSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: tool %q of %s: %w", t.Name, s.server, err)
	}
	opts := []onion.ToolOption{intent(t.Annotations), onion.WithCloser(s)}
	if desc := description(t); desc != "" {
		opts = append(opts, onion.Description(desc))
	}
	if t.Annotations != nil && t.Annotations.IdempotentHint {
		opts = append(opts, onion.Idempotent())
	}
	remote := t.Name
	tool, err := onion.NewRawTool(name, schema, func(ctx context.Context, args json.RawMessage) (any, error) {
		return s.call(ctx, remote, args)
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: tool %q of %s: %w", t.Name, s.server, err)
	}
	return tool, nil
}

// intent returns the onion intent that MCP tool annotations a declare:
// Read for readOnlyHint, Delete for an explicit destructiveHint: true,
// and Write otherwise, including when a is nil.
func intent(a *mcp.ToolAnnotations) onion.Intent {
	switch {
	case a == nil:
		return onion.Write
	case a.ReadOnlyHint:
		return onion.Read
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return onion.Delete
	}
	return onion.Write
}

// description is what the model reads about t: its description, else its
// title.
func description(t *mcp.Tool) string {
	switch {
	case t.Description != "":
		return t.Description
	case t.Title != "":
		return t.Title
	case t.Annotations != nil:
		return t.Annotations.Title
	}
	return ""
}

// inputSchema re-encodes the server's schema (the SDK hands it over
// decoded). A schema without "type" gets "type": "object", which MCP
// requires and onion insists on.
func inputSchema(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode input schema: %w", err)
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("input schema is not a JSON object: %w", err)
		}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode input schema: %w", err)
	}
	return b, nil
}

// uniqueName makes an onion tool name of the MCP name: characters outside
// [a-zA-Z0-9_-] become "_", the name is cut to 64 bytes, and a name already
// in taken gets a numeric suffix. It records the result in taken.
func uniqueName(mcpName string, taken map[string]bool) string {
	b := []byte(mcpName)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	base := string(b)
	if base == "" {
		base = "tool"
	}
	base = base[:min(len(base), 64)]
	name := base
	for n := 2; taken[name]; n++ {
		suffix := "_" + strconv.Itoa(n)
		name = base[:min(len(base), 64-len(suffix))] + suffix
	}
	taken[name] = true
	return name
}

// call calls the server's tool name with the model's arguments.
func (s *session) call(ctx context.Context, name string, args json.RawMessage) (any, error) {
	select {
	case <-s.gone:
		return nil, fmt.Errorf("%s is no longer connected, so the tool did not run", s.server)
	default:
	}
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, s.callError(ctx, err)
	}
	text := resultText(res)
	if res.IsError {
		if text == "" {
			text = fmt.Sprintf("%s reported an error without saying what went wrong", s.server)
		}
		// The server's text is written for the model: pass it on unchanged.
		return nil, errors.New(text)
	}
	return text, nil
}

// callError classifies a failed tools/call. A JSON-RPC error is the
// server's definite answer. mcp.ErrConnectionClosed means the SDK refused
// to send the request on a connection already closing (in v1.8 a call cut
// mid-way fails with the read error instead). The caller's context ending
// is left for the loop to judge. Anything else broke the exchange after the
// request may have reached the server, which may have acted on it.
func (s *session) callError(ctx context.Context, err error) error {
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc):
		return fmt.Errorf("%s refused the call: %s", s.server, rpc.Message)
	case errors.Is(err, mcp.ErrConnectionClosed):
		s.broken.Store(true)
		return fmt.Errorf("%s is no longer connected, so the tool did not run: %w", s.server, err)
	case ctx.Err() != nil:
		return fmt.Errorf("call to %s: %w", s.server, err)
	}
	s.broken.Store(true)
	return fmt.Errorf("the connection to %s broke during the call (%w): %w", s.server, err, onion.ErrOutcomeUnknown)
}

// resultText is what the model reads of a result.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if r := c.Resource; r != nil {
				if r.Text != "" {
					parts = append(parts, r.Text)
				} else {
					parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob)))
				}
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n\n")
}
