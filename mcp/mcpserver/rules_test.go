package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/mcp/mcpserver"
	"github.com/onionkit/onion/oniontest"
)

// This file holds the MCP door to the loop's rules: whatever the loop
// tells its model about a call, an MCP client is told too.

type transferArgs struct {
	Amount int `json:"amount"`
}

type noteOut struct {
	Note string `json:"note"`
}

// ruleTools are tools that each meet one of the loop's rules: approval
// decided by ApproveIf, the tool timeout (a read and a write that only end
// when their context does), panics, runtime.Goexit, errors, bad arguments,
// HTML in a result, and results too deep or cyclic to encode.
func ruleTools(t *testing.T) []*onion.Tool {
	t.Helper()
	waitForCut := func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	var tools []*onion.Tool
	for _, c := range []struct {
		fn   any
		opts []onion.ToolOption
	}{
		{func(a transferArgs) string { return fmt.Sprintf("sent %d", a.Amount) }, []onion.ToolOption{onion.Name("transfer"), onion.Write,
			onion.ApproveIf(func(_ context.Context, c onion.Call) (bool, error) {
				// Arguments that do not decode are left to validation.
				var a transferArgs
				_ = json.Unmarshal(c.Arguments, &a)
				return a.Amount > 100, nil
			})}},
		{waitForCut, []onion.ToolOption{onion.Name("wait_read"), onion.Read}},
		{waitForCut, []onion.ToolOption{onion.Name("wait_write"), onion.Write}},
		{func() string { panic("kaboom") }, []onion.ToolOption{onion.Name("explode_read"), onion.Read}},
		{func() string { panic("kaboom") }, []onion.ToolOption{onion.Name("explode_delete"), onion.Delete}},
		{func() string { runtime.Goexit(); return "" }, []onion.ToolOption{onion.Name("goexit"), onion.Read}},
		{func() error { return errors.New("disk full") }, []onion.ToolOption{onion.Name("fail"), onion.Write}},
		{func() noteOut { return noteOut{Note: "<b>a & b</b>"} }, []onion.ToolOption{onion.Name("html"), onion.Read}},
		{func() string { return "<b>a & b</b>" }, []onion.ToolOption{onion.Name("html_text"), onion.Read}},
		{tangle, []onion.ToolOption{onion.Name("tangle"), onion.Read}},
	} {
		tool, err := onion.NewTool(c.fn, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	return tools
}

// tangle returns a value that cannot be encoded: cyclic, or nested far
// deeper than a result may be (deep enough to overflow a plain
// json.Marshal's stack would take gigabytes; 100,000 levels is past the
// bound all the same).
func tangle(in struct {
	Shape string `json:"shape"`
}) any {
	if in.Shape == "cycle" {
		m := map[string]any{}
		m["self"] = m
		return m
	}
	return deepValue
}

// deepValue nests 100,000 levels deep, built once.
var deepValue = func() any {
	var v any = "bottom"
	for range 100_000 {
		v = []any{v}
	}
	return v
}()

// ruleCall is one call of ruleTools.
type ruleCall struct{ name, args string }

// ruleCalls are the calls made of ruleTools, one a response so that no
// call is skipped for an earlier one, with no tool timeout.
var ruleCalls = []ruleCall{
	{"transfer", `{"amount":5}`},    // no approval needed
	{"transfer", `{"amount":500}`},  // approved
	{"transfer", `{"amount":5000}`}, // refused by the approver
	{"transfer", `{"amount":"lots"}`},
	{"transfer", `[1]`},
	{"explode_read", `{}`},
	{"explode_delete", `{}`},
	{"goexit", `{}`},
	{"fail", `{}`},
	{"html", `{}`},
	{"html_text", `{}`},
	{"tangle", `{"shape":"cycle"}`},
	{"tangle", `{"shape":"deep"}`},
}

// timedCalls are the calls of the tools that end only when the tool
// timeout cuts them off.
var timedCalls = []ruleCall{{"wait_read", `{}`}, {"wait_write", `{}`}}

// approveUpTo1000 is the approver of the rule tests.
func approveUpTo1000(_ context.Context, c onion.Call) (bool, error) {
	var a transferArgs
	if err := json.Unmarshal(c.Arguments, &a); err != nil {
		return false, err
	}
	return a.Amount <= 1000, nil
}

// ruleTimeout is the tool timeout of timedCalls: the wait tools end only
// when it passes, so its length decides nothing but the test's time. The
// other calls run with none, so that a slow machine cannot cut them.
const ruleTimeout = 20 * time.Millisecond

// loopOutputs runs calls through a live Agent configured with opts and
// returns what its model read for each, from the last request sent to the
// model.
func loopOutputs(t *testing.T, tools []*onion.Tool, calls []ruleCall, opts ...onion.Option) []string {
	t.Helper()
	var steps []oniontest.Step
	for _, c := range calls {
		steps = append(steps, oniontest.ToolCalls(oniontest.Call(c.name, c.args)))
	}
	s := oniontest.NewServer(t, append(steps, oniontest.Text("done"))...)
	items := []any{onion.BaseURL(s.URL()), onion.APIKey("test"), onion.MaxIterations(len(calls) + 1)}
	for _, tool := range tools {
		items = append(items, tool)
	}
	for _, o := range opts {
		items = append(items, o)
	}
	a, err := onion.NewAgent("rules", items...)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if res, err := a.Run(context.Background(), "go"); err != nil || res.Output != "done" {
		t.Fatalf("run: %+v, %v", res, err)
	}
	reqs := s.Requests()
	var out []string
	for _, m := range reqs[len(reqs)-1].ToolResults() {
		out = append(out, m.Content)
	}
	if len(out) != len(calls) {
		t.Fatalf("the model read %d tool results, want %d", len(out), len(calls))
	}
	return out
}

// TestMCPKeepsTheLoopsRules is the differential test of the MCP door: each
// of ruleCalls and timedCalls, served over the SDK's in-memory transport
// on every protocol, gives the MCP client the very text the loop gives its
// model, and onion.RunCall gives, with isError exactly when the call did
// not succeed.
func TestMCPKeepsTheLoopsRules(t *testing.T) {
	tools := ruleTools(t)
	byName := make(map[string]*onion.Tool)
	for _, tool := range tools {
		byName[tool.Name()] = tool
	}
	for _, group := range []struct {
		name    string
		calls   []ruleCall
		timeout time.Duration
		want    []string // what the loop's model reads, in part
	}{
		{"Untimed", ruleCalls, 0, []string{
			"sent 5",
			"sent 500",
			onion.DeniedText,
			`error: invalid arguments for tool "transfer"`,
			`error: invalid arguments for tool "transfer"`,
			"error: the tool was cut off: it panicked: kaboom",
			"outcome unknown: the delete call started but was cut off (it panicked: kaboom)",
			"error: the tool was cut off: it ended its goroutine (runtime.Goexit) without returning",
			"error: disk full",
			`{"note":"<b>a & b</b>"}`,
			"<b>a & b</b>",
			"error: encode result as JSON: the value nests more than 10000 levels deep",
			"error: encode result as JSON: the value nests more than 10000 levels deep",
		}},
		{"Timed", timedCalls, ruleTimeout, []string{
			"error: the tool was cut off: it timed out after 20ms",
			"outcome unknown: the write call started but was cut off (it timed out after 20ms)",
		}},
	} {
		t.Run(group.name, func(t *testing.T) {
			loop := loopOutputs(t, tools, group.calls, onion.Approver(approveUpTo1000), onion.ToolTimeout(group.timeout))
			// The texts are the rules' own, not merely equal to each other.
			for i, want := range group.want {
				if !strings.HasPrefix(loop[i], want) {
					t.Errorf("%s(%s): the loop's model read %q, want it to begin %q", group.calls[i].name, group.calls[i].args, loop[i], want)
				}
			}
			cfg := drive.CallConfig{Approver: approveUpTo1000, Timeout: group.timeout}
			for _, version := range protocols {
				t.Run(version, func(t *testing.T) {
					cs := connectVersion(t, version, nil, tools, mcpserver.Approver(approveUpTo1000), mcpserver.ToolTimeout(group.timeout))
					for i, c := range group.calls {
						direct := drive.RunCall(context.Background(), byName[c.name], onion.Call{Arguments: json.RawMessage(c.args)}, cfg)
						res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.name, Arguments: json.RawMessage(c.args)})
						if err != nil {
							t.Fatalf("%s(%s): %v", c.name, c.args, err)
						}
						got := text(t, res)
						if res.IsError && direct.Outcome == onion.Failed {
							// isError says what the loop's "error: " says.
							got = "error: " + got
						}
						if got != loop[i] || got != direct.Output || res.IsError != (direct.Outcome != onion.Succeeded) {
							t.Errorf("%s(%s): MCP gave %q (isError %v); the loop's model read %q, RunCall gave %q (%s)",
								c.name, c.args, got, res.IsError, loop[i], direct.Output, direct.Outcome)
						}
					}
				})
			}
		})
	}
}

// TestMCPDeniesWithoutApprover holds the MCP door to the loop's fail-closed
// rule: with no approver and no way to ask the client, a call that
// ApproveIf says needs approval is denied with the loop's text, and one it
// lets through runs.
func TestMCPDeniesWithoutApprover(t *testing.T) {
	tools := ruleTools(t)
	transfer := tools[0]
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			cs := connectVersion(t, version, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, transfer)
			for _, args := range []string{`{"amount":5}`, `{"amount":500}`} {
				direct := drive.RunCall(context.Background(), transfer, onion.Call{Arguments: json.RawMessage(args)}, drive.CallConfig{})
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "transfer", Arguments: json.RawMessage(args)})
				if err != nil {
					t.Fatal(err)
				}
				want := direct.Output
				if direct.Outcome == onion.Denied {
					// Denied as the loop denies it, saying why: nobody was asked.
					want = "the call needed approval and nobody could be asked (the MCP client cannot be asked: it has no elicitation capability), so the tool did not run. Do not call it again unless the user asks for it."
				}
				if text(t, res) != want || res.IsError != (direct.Outcome != onion.Succeeded) {
					t.Errorf("transfer(%s): MCP gave %q (isError %v), RunCall %q (%s)", args, text(t, res), res.IsError, direct.Output, direct.Outcome)
				}
			}
		})
	}
}

// TestStructuredContentIsTheText sends, for a struct result with HTML in
// it, structuredContent holding the same JSON as the text, which is
// Tool.Call's, < and & unescaped.
func TestStructuredContentIsTheText(t *testing.T) {
	cs := connectVersion(t, protocols[0], nil, ruleTools(t))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "html", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	html, err := onion.NewTool(func() noteOut { return noteOut{Note: "<b>a & b</b>"} }, onion.Name("html"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	want, err := html.Call(context.Background(), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if text(t, res) != want || !jsonEqual(t, res.StructuredContent, map[string]any{"note": "<b>a & b</b>"}) {
		t.Errorf("html: text %q, structuredContent %v; want Tool.Call's %q as both", text(t, res), res.StructuredContent, want)
	}
}
