package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves the tools made of items (see New) over stdin and stdout
// until the client disconnects, when it returns nil, or ctx ends, when it
// returns ctx's error. Either way it first closes the items that are
// io.Closer. Nothing else may write to stdout meanwhile: log to stderr.
//
// A line that is not a JSON-RPC message does not end the session: it is
// answered with a JSON-RPC parse error (-32700) or invalid request error
// (-32600), and the server goes on serving.
func ServeStdio(ctx context.Context, items ...any) error {
	return serveLines(ctx, os.Stdin, os.Stdout, items)
}

// serveLines is ServeStdio over any pair of streams.
func serveLines(ctx context.Context, in io.Reader, out io.Writer, items []any) error {
	s, _, err := build(items)
	if err != nil {
		return err
	}
	err = s.Run(ctx, &lineTransport{in: in, out: out, maxLine: mcp.DefaultMaxLineLength})
	switch {
	case err == nil, errors.Is(err, io.EOF):
		err = nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
	default:
		err = fmt.Errorf("mcpserver: serve stdio: %w", err)
	}
	return errors.Join(err, closeItems(items))
}

// Handler returns an http.Handler serving the tools made of items (see New)
// over MCP's streamable HTTP transport; mount it where hosts should connect,
// such as "/mcp". Every session shares the same tools, and so the same
// struct instances. HTTPOptions among the items configures the transport.
//
// Every protocol version the SDK speaks is served: the older ones with a
// session per client, the newest (2026-07-28), which has no sessions,
// statelessly, as the SDK serves it only so. On the newest protocol a
// client that closes its request's stream cancels the call, as the
// protocol requires, whatever HTTPOptions says. A request body may hold up
// to 16 MiB (mcp.DefaultMaxLineLength, as a message on stdio), unless
// HTTPOptions sets MaxRequestBodyBytes; a bigger one is answered HTTP 413.
func Handler(items ...any) (http.Handler, error) {
	s, cfg, err := build(items)
	if err != nil {
		return nil, err
	}
	serve := func(*http.Request) *mcp.Server { return s }
	opts := &mcp.StreamableHTTPOptions{}
	if cfg.http != nil {
		*opts = *cfg.http
	}
	// On the newest protocol a client that closes its request's stream has
	// canceled the request: the tool's context must end with it.
	opts.PropagateRequestCancellation = true
	if opts.MaxRequestBodyBytes == 0 {
		// The same bound as a line on stdio, not the SDK's 4 MiB.
		opts.MaxRequestBodyBytes = mcp.DefaultMaxLineLength
	}
	if opts.Stateless {
		return mcp.NewStreamableHTTPHandler(serve, opts), nil
	}
	stateless := *opts
	stateless.Stateless = true
	return &versionRouter{
		sessions: mcp.NewStreamableHTTPHandler(serve, opts),
		newest:   mcp.NewStreamableHTTPHandler(serve, &stateless),
	}, nil
}

// versionRouter sends the requests of the newest protocol, which name it
// in their Mcp-Protocol-Version header, to a stateless handler and the
// rest to one that keeps sessions.
type versionRouter struct {
	sessions, newest http.Handler
}

func (v *versionRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("Mcp-Protocol-Version") >= newestProtocol {
		v.newest.ServeHTTP(w, r)
		return
	}
	v.sessions.ServeHTTP(w, r)
}

// closeItems closes the items that are io.Closer, as onion.Agent.Close
// would, and joins their errors.
func closeItems(items []any) error {
	var errs []error
	for _, item := range items {
		if c, ok := item.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("mcpserver: close %T: %w", item, err))
			}
		}
	}
	return errors.Join(errs...)
}
