//lint:file-ignore SA1019 roots are deprecated from protocol 2026-07-28 on (SEP-2577), but servers on older protocols still ask for them.

package mcpclient

import (
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// capabilities are the client capabilities to declare: roots only when
// there are roots to serve.
func capabilities(roots []string) *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	if len(roots) > 0 {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	return caps
}

// rootOf is the MCP root of a directory the user named.
func rootOf(dir string) (*mcp.Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: root %q: %w", dir, err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return &mcp.Root{URI: u.String(), Name: filepath.Base(abs)}, nil
}

// serveRoots makes client serve the directories dirs as its roots.
func serveRoots(client *mcp.Client, dirs []string) error {
	for _, dir := range dirs {
		root, err := rootOf(dir)
		if err != nil {
			return err
		}
		client.AddRoots(root)
	}
	return nil
}
