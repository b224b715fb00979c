package mcpserver_test

import (
	"testing"

	"github.com/onionkit/onion/mcp/internal/mcptest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// A test re-executes this binary as a stdio MCP server.
	mcptest.ServeIfAsked()
	goleak.VerifyTestMain(m)
}
