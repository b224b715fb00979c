package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/mcp/internal/outcome"
)

// session is one connection to a server, shared by all its tools and
// closed once.
type session struct {
	cs     *mcp.ClientSession
	server string        // the server's name, for error messages
	gone   chan struct{} // closed when the connection has ended
	broken atomic.Bool   // a call saw the connection fail
	once   sync.Once
	// approves names the tools (by their onion names) whose server asks
	// its own user before they run; written while listing, read after.
	approves map[string]bool
}

func newSession(cs *mcp.ClientSession, server string) *session {
	s := &session{cs: cs, server: server, gone: make(chan struct{})}
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

// tools lists the server's tools and wraps each; raw holds them as the
// server sent them. A tool that cannot be used is left out, and said so.
func (s *session) tools(ctx context.Context, raw *rawTools) ([]*onion.Tool, []*LeftOutError, error) {
	var (
		out     []*onion.Tool
		leftOut []*LeftOutError
	)
	names := make(map[string]bool)
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("mcpclient: list the tools of %s: %w", s.server, err)
		}
		r, _ := raw.get(t.Name)
		if r.Execution.TaskSupport == "required" {
			leftOut = append(leftOut, &LeftOutError{Server: s.server, Tool: t.Name,
				Reason: "it runs only as a task (execution.taskSupport: required), which mcpclient does not call"})
			continue
		}
		ot, err := s.wrap(t, r.InputSchema, names)
		if err != nil {
			leftOut = append(leftOut, &LeftOutError{Server: s.server, Tool: t.Name, Reason: err.Error()})
			continue
		}
		out = append(out, ot)
	}
	return out, leftOut, nil
}

// wrap makes the onion tool of the server's tool t, whose input schema the
// server sent as rawSchema, under a name not yet in names.
func (s *session) wrap(t *mcp.Tool, rawSchema json.RawMessage, names map[string]bool) (*onion.Tool, error) {
	schema, err := inputSchema(rawSchema, t.InputSchema)
	if err != nil {
		return nil, err
	}
	opts := []onion.ToolOption{intent(t), onion.WithCloser(s)}
	if desc := description(t); desc != "" {
		opts = append(opts, onion.Description(desc))
	}
	if t.Annotations != nil && t.Annotations.IdempotentHint {
		opts = append(opts, onion.Idempotent())
	}
	remote := t.Name
	name := uniqueName(t.Name, names)
	if said, _ := t.Meta[outcome.ApprovalKey].(string); said == "required" {
		if s.approves == nil {
			s.approves = map[string]bool{}
		}
		s.approves[name] = true
	}
	tool, err := onion.NewRawTool(name, schema, func(ctx context.Context, args json.RawMessage) (any, error) {
		return s.call(ctx, remote, args)
	}, opts...)
	if err != nil {
		delete(names, name)
		return nil, err
	}
	return tool, nil
}

// intent returns the onion intent that t's annotations declare: Read for
// readOnlyHint, Delete for an explicit destructiveHint: true, and Write
// otherwise, including when there are none. An onion server's destructive
// write says "write" in its _meta (outcome.IntentKey), which only ever
// narrows a Delete to a Write: a peer's _meta cannot make a tool a read.
func intent(t *mcp.Tool) onion.Intent {
	a := t.Annotations
	switch {
	case a == nil:
		return onion.Write
	case a.ReadOnlyHint:
		return onion.Read
	case a.DestructiveHint != nil && *a.DestructiveHint:
		if said, _ := t.Meta[outcome.IntentKey].(string); said == string(onion.Write) {
			return onion.Write
		}
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
	if res.IsError {
		text := resultText(res)
		if text == "" {
			text = fmt.Sprintf("%s reported an error without saying what went wrong", s.server)
		}
		return nil, resultError(res, text)
	}
	text, images := resultContent(res)
	if len(images) > 0 && !onion.ShowImages(ctx, images...) {
		return resultText(res), nil // called outside a run: described instead
	}
	return text, nil
}

// ErrDeniedByServer matches, with errors.Is, the error of a call that an
// onion MCP server denied: the call needed approval there and did not get
// it, so it did not run. For this agent's loop it is a failure like any
// other (it was not this agent's user who said no); a program such as the
// onion command can tell it apart.
var ErrDeniedByServer = errors.New("mcpclient: the server denied the call")

// resultError is the error of an isError result whose text is text. An
// onion server says in the result's _meta when a write was cut off mid-call
// on its side: the error then wraps onion.ErrOutcomeUnknown, so that this
// loop ends the call outcome_unknown too, and its text is the server's
// reason, which the loop words exactly as the server's loop did. Any other
// isError result, a denial on the server included, is a failure whose text
// is the server's, written for the model and passed on unchanged.
func resultError(res *mcp.CallToolResult, text string) error {
	o, reason := outcome.Of(res)
	switch o {
	case onion.Denied:
		return &plainError{text: text, wrapped: []error{ErrDeniedByServer}}
	case onion.OutcomeUnknown:
	default:
		return errors.New(text)
	}
	if reason == "" {
		reason = text
	}
	return &plainError{text: reason, wrapped: []error{onion.ErrOutcomeUnknown}}
}

// callError classifies a failed tools/call. The caller's context ending is
// left for the loop to judge. A request that could not be sent at all (a
// refused HTTP connection, mcp.ErrConnectionClosed for a connection
// already closing) did not run. An HTTP exchange cut after the request
// went out may have run: the SDK marks it "rejected by transport" like a
// request never sent, but a streamed answer has no headers until the tool
// is done, so an early EOF says nothing. A JSON-RPC error from the server
// is its definite answer. Anything else broke the exchange after the
// request may have reached the server, which may have acted on it.
func (s *session) callError(ctx context.Context, err error) error {
	var (
		rpc    *jsonrpc.Error
		urlErr *url.Error
		opErr  *net.OpError
	)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("call to %s: %w", s.server, err)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		s.broken.Store(true)
		return &plainError{text: s.server + " cannot be reached, so the tool did not run", wrapped: []error{err}}
	case errors.As(err, &urlErr):
	case errors.Is(err, mcp.ErrConnectionClosed):
		s.broken.Store(true)
		return &plainError{text: s.server + " is no longer connected, so the tool did not run", wrapped: []error{err}}
	case errors.As(err, &rpc) && rpc.Code != codeRejectedByTransport:
		return fmt.Errorf("%s refused the call: %s", s.server, rpc.Message)
	case errors.As(err, &rpc):
		return &plainError{text: s.server + " turned the call down before it ran", wrapped: []error{err}}
	}
	s.broken.Store(true)
	return &plainError{
		text:    "the connection to " + s.server + " broke during the call, so nobody knows whether the tool did its work",
		wrapped: []error{err, onion.ErrOutcomeUnknown},
	}
}

// codeRejectedByTransport is the JSON-RPC code the SDK gives errors of its
// own transport, which no server sent.
const codeRejectedByTransport = -32005

// plainError says what happened in one plain sentence, for the model,
// while still wrapping the transport's error (and onion's sentinel) for
// the program's errors.Is and errors.As.
type plainError struct {
	text    string
	wrapped []error
}

func (e *plainError) Error() string   { return e.text }
func (e *plainError) Unwrap() []error { return e.wrapped }

// resultText is what the model reads of a result, images described.
func resultText(res *mcp.CallToolResult) string {
	text, _ := content(res, false)
	return text
}

// resultContent is what the model reads of a result and the images it is
// shown: each image that, with those before it, is within the bounds of
// loop.CheckImages (a PNG, JPEG, GIF or WebP whose bytes are of its
// mimeType, not too many, not too large); any other is described.
func resultContent(res *mcp.CallToolResult) (string, []onion.Image) {
	return content(res, true)
}

func content(res *mcp.CallToolResult, show bool) (string, []onion.Image) {
	var (
		parts  []string
		images []onion.Image
	)
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			if show {
				img := onion.Image{MIMEType: c.MIMEType, Data: c.Data}
				if loop.CheckImages(append(images, img)) == nil {
					images = append(images, img)
					continue
				}
			}
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes, not shown]", clip(c.MIMEType), len(c.Data)))
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
			return string(b), images
		}
	}
	return strings.Join(parts, "\n\n"), images
}

// clip bounds a peer's word (a MIME type) that a description quotes.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
