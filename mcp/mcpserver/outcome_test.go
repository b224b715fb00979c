package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// TestOutcomeMeta checks the _meta of each kind of result: a write cut
// off mid-call and a denied call say their onion outcome and why, under
// the io.github.onionkit/ keys; a failure, a read cut off and a success
// carry no _meta, so other peers see plain MCP results.
func TestOutcomeMeta(t *testing.T) {
	tool := func(fn any, name string, opts ...onion.ToolOption) *onion.Tool {
		t.Helper()
		tt, err := onion.NewTool(fn, append([]onion.ToolOption{onion.Name(name)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	tools := []*onion.Tool{
		tool(func() string { panic("kaboom") }, "boom", onion.Write),
		// A remote tool whose connection broke mid-call, say.
		tool(func() error { return fmt.Errorf("the line dropped: %w", onion.ErrOutcomeUnknown) }, "drop", onion.Delete),
		tool(func() string { panic("kaboom") }, "peek", onion.Read),
		tool(func() error { return errors.New("disk full") }, "fail", onion.Write),
		tool(func() string { return "done" }, "fine", onion.Write),
		tool(func() string { return "paid" }, "pay", onion.Write, onion.RequireApproval()),
	}
	srv, err := mcpserver.New(tools)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	// No elicitation capability: a call that needs approval is denied.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "v0"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).
		Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	for _, c := range []struct {
		tool    string
		isError bool
		meta    map[string]any // onion's keys; nil for none
	}{
		{"boom", true, map[string]any{"io.github.onionkit/outcome": "outcome_unknown", "io.github.onionkit/reason": "it panicked: kaboom"}},
		{"drop", true, map[string]any{"io.github.onionkit/outcome": "outcome_unknown", "io.github.onionkit/reason": "the line dropped: outcome unknown"}},
		{"pay", true, map[string]any{"io.github.onionkit/outcome": "denied", "io.github.onionkit/reason": "approver failed: the MCP client cannot be asked: it has no elicitation capability"}},
		{"peek", true, nil},
		{"fail", true, nil},
		{"fine", false, nil},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		// The SDK may add keys of its own (io.modelcontextprotocol/serverInfo).
		onionMeta := map[string]any{}
		for k, v := range res.Meta {
			if strings.HasPrefix(k, "io.github.onionkit/") {
				onionMeta[k] = v
			}
		}
		if c.meta == nil {
			c.meta = map[string]any{}
		}
		if res.IsError != c.isError || !reflect.DeepEqual(onionMeta, c.meta) {
			t.Errorf("%s: isError %v, onion's _meta %v (text %q); want isError %v, _meta %v", c.tool, res.IsError, onionMeta, text(t, res), c.isError, c.meta)
		}
	}
}
