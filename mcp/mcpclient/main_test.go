package mcpclient_test

import (
	"testing"

	"github.com/onionkit/onion/mcp/internal/mcptest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Tests re-execute this binary as a stdio MCP server.
	mcptest.ServeIfAsked()
	// regexp2 keeps a clock goroutine for about a second after a match
	// with a time limit (onion gives every one a limit), then ends it.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}
