package mcpclient_test

import (
	"testing"

	"github.com/onionkit/onion/mcp/internal/mcptest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Tests re-execute this binary as a stdio MCP server.
	mcptest.ServeIfAsked()
	goleak.VerifyTestMain(m)
}
