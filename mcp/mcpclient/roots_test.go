//lint:file-ignore SA1019 the roots capability is deprecated from 2026-07-28 on, and still served to older servers.

package mcpclient_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion/mcp/internal/mcptest"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// connectSeen connects mcpclient with opts to a server of the test tools
// and returns the server's side of the session, which saw what the client
// declared.
func connectSeen(t *testing.T, opts ...mcpclient.Option) *mcp.ServerSession {
	t.Helper()
	srv, err := mcpserver.New(mcptest.Items()...)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	client, err := mcpclient.Connect(context.Background(), ct, append(opts, mcpclient.ProtocolVersion("2025-11-25"))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return ss
}

// TestDeclaresOnlyWhatItServes checks the client's capabilities: none by
// default (it serves no roots, sampling or elicitation), roots when asked
// to serve some, and then the very directories named.
func TestDeclaresOnlyWhatItServes(t *testing.T) {
	caps := connectSeen(t).InitializeParams().Capabilities
	if caps == nil || caps.RootsV2 != nil || caps.Roots.ListChanged || caps.Sampling != nil || caps.Elicitation != nil {
		t.Errorf("capabilities %+v; want none declared", caps)
	}

	dir := t.TempDir()
	ss := connectSeen(t, mcpclient.Roots(dir))
	if caps := ss.InitializeParams().Capabilities; caps == nil || caps.RootsV2 == nil {
		t.Fatalf("capabilities %+v; want roots declared", caps)
	}
	res, err := ss.ListRoots(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Roots) != 1 || res.Roots[0].URI != "file://"+filepath.ToSlash(dir) || res.Roots[0].Name != filepath.Base(dir) {
		t.Errorf("roots %+v; want %s", res.Roots, dir)
	}
}
