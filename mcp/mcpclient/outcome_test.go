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
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/mcp/internal/mcptest"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/mcp/mcpserver"
	"github.com/onionkit/onion/oniontest"
)

// rawServer serves, with the SDK alone, tools that answer with the given
// results, and returns the client's end. runs counts the calls of each.
func rawServer(t *testing.T, results map[string]*mcp.CallToolResult, runs map[string]*atomic.Int32) mcp.Transport {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "v0"}, nil)
	for name, res := range results {
		n := new(atomic.Int32)
		runs[name] = n
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				n.Add(1)
				return res, nil
			})
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	return ct
}

func textResult(text string, isError bool, meta mcp.Meta) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError, Meta: meta}
}

// TestResultOutcome reads isError results with and without onion's
// outcome in _meta: only an isError result that says outcome_unknown is
// one; any other peer's isError, whatever its words, is a plain failure.
func TestResultOutcome(t *testing.T) {
	const (
		outcomeKey = "io.github.onionkit/outcome"
		reasonKey  = "io.github.onionkit/reason"
	)
	results := map[string]*mcp.CallToolResult{
		// A server that is not onion, even one whose words sound like it.
		"plain":   textResult("outcome unknown: the disk may be full", true, nil),
		"lost":    textResult("the server's long words", true, mcp.Meta{outcomeKey: "outcome_unknown", reasonKey: "the printer caught fire"}),
		"unsaid":  textResult("nobody knows whether it printed", true, mcp.Meta{outcomeKey: "outcome_unknown"}),
		"denied":  textResult(onion.DeniedText, true, mcp.Meta{outcomeKey: "denied", reasonKey: "the approver said no"}),
		"odd":     textResult("it broke", true, mcp.Meta{outcomeKey: 42}),
		"claims":  textResult("printed", false, mcp.Meta{outcomeKey: "outcome_unknown"}),
		"printed": textResult("printed", false, nil),
	}
	runs := map[string]*atomic.Int32{}
	tools, err := mcpclient.Tools(context.Background(), rawServer(t, results, runs))
	if err != nil {
		t.Fatal(err)
	}
	byName := toolMap(tools)
	t.Cleanup(func() { closeTools(tools) })

	for _, c := range []struct {
		tool    string
		unknown bool   // the error wraps onion.ErrOutcomeUnknown
		text    string // the error's text, or the output when it succeeds
		ok      bool
	}{
		{"plain", false, "outcome unknown: the disk may be full", false},
		{"lost", true, "the printer caught fire", false},
		{"unsaid", true, "nobody knows whether it printed", false},
		{"denied", false, onion.DeniedText, false},
		{"odd", false, "it broke", false},
		{"claims", false, "printed", true},
	} {
		out, err := byName[c.tool].Call(context.Background(), `{}`)
		got := out
		if err != nil {
			got = err.Error()
		}
		if (err == nil) != c.ok || errors.Is(err, onion.ErrOutcomeUnknown) != c.unknown || got != c.text {
			t.Errorf("%s: %q, %v (outcome unknown %v); want %q, ok %v, outcome unknown %v",
				c.tool, out, err, errors.Is(err, onion.ErrOutcomeUnknown), c.text, c.ok, c.unknown)
		}
	}

	// In a loop: another peer's isError fails the write, which skips the
	// later write of the response as any failed write does; onion's
	// outcome_unknown ends the write so and skips the later one too.
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("plain", `{}`), oniontest.Call("printed", `{}`)),
		oniontest.ToolCalls(oniontest.Call("lost", `{}`), oniontest.Call("printed", `{}`)),
		oniontest.Text("done"),
	)
	agent, err := onion.NewAgent("outcomes", byName["plain"], byName["lost"], byName["printed"], onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), "print")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name    string
		outcome onion.Outcome
	}{{"plain", onion.Failed}, {"printed", onion.Skipped}, {"lost", onion.OutcomeUnknown}, {"printed", onion.Skipped}}
	if len(res.ToolCalls) != len(want) {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	for i, w := range want {
		if got := res.ToolCalls[i]; got.Name != w.name || got.Outcome != w.outcome {
			t.Errorf("call %d = (%s, %s, %q), want (%s, %s)", i, got.Name, got.Outcome, got.Output, w.name, w.outcome)
		}
	}
	if got := res.ToolCalls[0].Output; got != "error: outcome unknown: the disk may be full" {
		t.Errorf("plain: output %q, want the server's text as a failure", got)
	}
	if got := res.ToolCalls[2].Output; strings.Count(got, "the printer caught fire") != 1 || strings.Count(got, "outcome unknown") != 1 {
		t.Errorf("lost: output %q, want the server's reason once in the loop's outcome_unknown words", got)
	}
	if n := runs["printed"].Load(); n != 0 {
		t.Errorf("printed ran %d times, want the skipped writes never sent", n)
	}
}

// TestDeniedOnTheServer calls, through mcpclient, an onion tool that the
// server's side denies (mcpclient cannot be asked: it declares no
// elicitation): the client's loop records a failure with the server's
// denial, since its own user denied nothing.
func TestDeniedOnTheServer(t *testing.T) {
	var runs atomic.Int32
	pay, err := onion.NewTool(func() string { runs.Add(1); return "paid" }, onion.Name("pay"), onion.Write, onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(pay)
	if err != nil {
		t.Fatal(err)
	}
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
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("pay", `{}`)), oniontest.Text("not paid"))
	agent, err := onion.NewAgent("payer", tools, onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	res, err := agent.Run(context.Background(), "pay")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 {
		t.Fatalf("tool calls = %+v", res.ToolCalls)
	}
	// Nobody on the server's side was asked (this client cannot be): the
	// server says so, and this loop reads it as the server's failure.
	const denial = "error: the call needed approval and nobody could be asked (the MCP client cannot be asked: it has no elicitation capability), so the tool did not run. Do not call it again unless the user asks for it."
	if got := res.ToolCalls[0]; got.Outcome != onion.Failed || got.Output != denial || runs.Load() != 0 {
		t.Errorf("pay = (%s, %q), runs %d; want failed with the server's denial, never run", got.Outcome, got.Output, runs.Load())
	}
}

// TestOutcomeThroughTwoDoors serves mcpclient's tools again with
// mcpserver, as a proxy does, and calls them through both: a write cut
// off on the first server still ends outcome_unknown, in the very words
// of a local call.
func TestOutcomeThroughTwoDoors(t *testing.T) {
	ctx := context.Background()
	first, err := mcpclient.Tools(ctx, serveInMemory(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeTools(first) })
	proxy, err := mcpserver.New(first)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := proxy.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	second, err := mcpclient.Tools(ctx, ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeTools(second) })

	explode := toolMap(second)["explode"]
	got := drive.RunCall(ctx, explode, onion.Call{Arguments: json.RawMessage(`{}`)}, drive.CallConfig{})
	local, err := onion.ToolsFrom(mcptest.NewNotes())
	if err != nil {
		t.Fatal(err)
	}
	want := drive.RunCall(ctx, toolMap(local)["explode"], onion.Call{Arguments: json.RawMessage(`{}`)}, drive.CallConfig{})
	if got.Outcome != onion.OutcomeUnknown || got.Output != want.Output || got.Error != want.Error {
		t.Errorf("explode through two doors = (%s, %q, %q), want (%s, %q, %q)", got.Outcome, got.Output, got.Error, want.Outcome, want.Output, want.Error)
	}
}
