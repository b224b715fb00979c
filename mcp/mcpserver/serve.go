package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves the tools made of items (see New) over stdin and stdout
// until the client disconnects, when it returns nil, or ctx ends, when it
// returns ctx's error. Either way it first closes the items that are
// io.Closer. Nothing else may write to stdout meanwhile: log to stderr.
func ServeStdio(ctx context.Context, items ...any) error {
	s, err := New(items...)
	if err != nil {
		return err
	}
	err = s.Run(ctx, &mcp.StdioTransport{})
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("mcpserver: serve stdio: %w", err)
	} else {
		err = nil
	}
	return errors.Join(err, closeItems(items))
}

// Handler returns an http.Handler serving the tools made of items (see New)
// over MCP's streamable HTTP transport; mount it where hosts should connect,
// such as "/mcp". Every session shares the same tools, and so the same
// struct instances.
func Handler(items ...any) (http.Handler, error) {
	s, err := New(items...)
	if err != nil {
		return nil, err
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), nil
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
