package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpclient"
)

// TestServerPatternIsBounded lists a server tool whose schema has a
// lookaround pattern that backtracks without end on a run of a's: the tool
// is offered (the pattern is ECMA-262, as JSON Schema defines patterns),
// and a call whose argument the pattern cannot decide in time is refused
// as invalid arguments, naming the pattern, without reaching the server.
func TestServerPatternIsBounded(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "patterns", Version: "v0"}, nil)
	var runs atomic.Int32
	srv.AddTool(&mcp.Tool{Name: "tag", InputSchema: json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string","pattern":"^(?=a)(a+)+$"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			runs.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "tagged"}}}, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	tools, err := mcpclient.Tools(context.Background(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeTools(tools) })
	tool, ok := toolMap(tools)["tag"]
	if !ok {
		t.Fatalf("the tool with a lookaround pattern was left out: %v", tools)
	}
	if out, err := tool.Call(context.Background(), `{"tag":"aaa!"}`); err == nil {
		t.Errorf("a tag the pattern refuses was sent: %q", out)
	}
	_, err = tool.Call(context.Background(), `{"tag":"`+strings.Repeat("a", 40)+`!"}`)
	if !errors.Is(err, onion.ErrInvalidArguments) || !strings.Contains(err.Error(), `tag: the pattern "^(?=a)(a+)+$" gave up after `) {
		t.Errorf("got %v, want the tag refused because its pattern gave up", err)
	}
	if out, err := tool.Call(context.Background(), `{"tag":"aaa"}`); err != nil || out != "tagged" {
		t.Errorf("a tag the pattern takes: %q, %v", out, err)
	}
	if runs.Load() != 1 {
		t.Errorf("the server ran %d times, want once (for the good tag)", runs.Load())
	}
}
