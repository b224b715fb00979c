package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion/mcp/internal/mcptest"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// TestHandlerSpeaksEveryProtocol connects the SDK's client over streamable
// HTTP on each protocol version it speaks, the newest included, with the
// default transport options and with options of the program's own.
func TestHandlerSpeaksEveryProtocol(t *testing.T) {
	for _, opts := range []struct {
		name string
		item []any
	}{
		{"Default", nil},
		{"JSONResponse", []any{mcpserver.HTTPOptions(&mcp.StreamableHTTPOptions{JSONResponse: true})}},
		{"Stateless", []any{mcpserver.HTTPOptions(&mcp.StreamableHTTPOptions{Stateless: true})}},
	} {
		for _, version := range mcp.SupportedProtocolVersions() {
			t.Run(opts.name+"/"+version, func(t *testing.T) {
				h, err := mcpserver.Handler(append(mcptest.Items(), opts.item...)...)
				if err != nil {
					t.Fatal(err)
				}
				hs := httptest.NewServer(h)
				defer hs.Close()
				ctx := context.Background()
				client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
				cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Errorf("negotiated %s, want %s", got, version)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
				if err != nil || res.IsError || text(t, res) != "5" {
					t.Errorf("add(2, 3) = %+v, %v", res, err)
				}
			})
		}
	}
}

// TestErrorsSayMcpserverOnce checks that errors name the package once,
// whatever layer they come from.
func TestErrorsSayMcpserverOnce(t *testing.T) {
	for _, items := range [][]any{
		nil,
		{(*mcp.Implementation)(nil)},
		{mcptest.Add, mcptest.Add},
		{42},
	} {
		_, err := mcpserver.Handler(items...)
		if err == nil {
			t.Fatalf("Handler(%v) = nil error", items)
		}
		if n := strings.Count(err.Error(), "mcpserver:"); n != 1 {
			t.Errorf("Handler(%v): %q names mcpserver %d times", items, err, n)
		}
		if err := mcpserver.ServeStdio(context.Background(), items...); err == nil || strings.Count(err.Error(), "mcpserver:") != 1 {
			t.Errorf("ServeStdio(%v): %v", items, err)
		}
	}
}
