package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/mcp/internal/mcptest"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// connect returns an SDK client session of a server of the test tools,
// reached over the named transport, closed when the test ends.
func connect(t *testing.T, transport string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
	var ct mcp.Transport
	switch transport {
	case "memory":
		srv, err := mcpserver.New(mcptest.Items()...)
		if err != nil {
			t.Fatal(err)
		}
		st, cht := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close(); ss.Wait() })
		ct = cht
	case "stdio":
		ct = &mcp.CommandTransport{Command: mcptest.Command()}
	case "http":
		h, err := mcpserver.Handler(mcptest.Items()...)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		ct = &mcp.StreamableClientTransport{Endpoint: hs.URL}
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// localTools are the test tools as an agent would hold them.
func localTools(t *testing.T) map[string]*onion.Tool {
	t.Helper()
	m := make(map[string]*onion.Tool)
	for _, item := range mcptest.Items() {
		ts, err := onion.ToolsFrom(item)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range ts {
			m[tool.Name()] = tool
		}
	}
	return m
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content items, want 1: %+v", len(res.Content), res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// TestServe lists and calls the test tools with the SDK's own client, over
// each transport the package offers.
func TestServe(t *testing.T) {
	for _, transport := range []string{"memory", "stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			cs := connect(t, transport)
			ctx := context.Background()
			local := localTools(t)

			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != len(local) {
				t.Errorf("listed %d tools, want %d", len(res.Tools), len(local))
			}
			for _, rt := range res.Tools {
				lt, ok := local[rt.Name]
				if !ok {
					t.Errorf("unexpected tool %q", rt.Name)
					continue
				}
				if rt.Description != lt.Description() {
					t.Errorf("%s: description %q, want %q", rt.Name, rt.Description, lt.Description())
				}
				if !jsonEqual(t, rt.InputSchema, json.RawMessage(lt.Schema())) {
					t.Errorf("%s: inputSchema %v, want the agent's %s", rt.Name, rt.InputSchema, lt.Schema())
				}
				want, err := lt.OutputSchema()
				if err != nil {
					t.Fatal(err)
				}
				switch rt := lt.ResultType(); {
				case rt == nil || rt.Kind() == reflect.String:
					want = nil
				case rt.Kind() != reflect.Struct:
					if rt.Kind() == reflect.Slice {
						want = json.RawMessage(`{"anyOf":[` + string(want) + `,{"type":"null"}]}`)
					}
					want = json.RawMessage(`{"type":"object","properties":{"result":` + string(want) + `},"required":["result"],"additionalProperties":false}`)
				}
				if want == nil && rt.OutputSchema != nil || want != nil && !jsonEqual(t, rt.OutputSchema, want) {
					t.Errorf("%s: outputSchema %v, want %s", rt.Name, rt.OutputSchema, want)
				}
				a := rt.Annotations
				if a == nil {
					t.Errorf("%s: no annotations", rt.Name)
					continue
				}
				destructive := a.DestructiveHint != nil && *a.DestructiveHint
				switch lt.Intent() {
				case onion.Read:
					if !a.ReadOnlyHint {
						t.Errorf("%s: read tool without readOnlyHint: %+v", rt.Name, a)
					}
				case onion.Write:
					// MCP reads destructiveHint false as "only additive
					// updates": only a write that says so is sent that.
					if a.ReadOnlyHint || a.DestructiveHint == nil || destructive == lt.Additive() {
						t.Errorf("%s: write tool (additive %v) annotated %+v, want destructiveHint %v", rt.Name, lt.Additive(), a, !lt.Additive())
					}
				case onion.Delete:
					if a.ReadOnlyHint || !destructive {
						t.Errorf("%s: delete tool annotated %+v, want destructiveHint true", rt.Name, a)
					}
				}
				if a.IdempotentHint != lt.Idempotent() {
					t.Errorf("%s: idempotentHint %v, want %v", rt.Name, a.IdempotentHint, lt.Idempotent())
				}
			}

			call := func(name, args string) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
				if err != nil {
					t.Fatalf("call %s(%s): %v", name, args, err)
				}
				return res
			}

			// An object is structured content as it is; other values are
			// wrapped as {"result": …}, as the output schema says.
			if res := call("add", `{"a":2,"b":40}`); res.IsError || text(t, res) != "42" || !jsonEqual(t, res.StructuredContent, map[string]any{"result": 42}) {
				t.Errorf("add: %+v, want text 42 and structuredContent {\"result\":42}", res)
			}
			res2 := call("save", `{"title":"plan","body":"ship it"}`)
			if res2.IsError || text(t, res2) != `{"title":"plan","body":"ship it"}` {
				t.Errorf("save: %+v", res2)
			}
			if !jsonEqual(t, res2.StructuredContent, map[string]any{"title": "plan", "body": "ship it"}) {
				t.Errorf("save structuredContent = %v", res2.StructuredContent)
			}
			if res := call("titles", `{}`); res.IsError || text(t, res) != `["plan"]` || !jsonEqual(t, res.StructuredContent, map[string]any{"result": []any{"plan"}}) {
				t.Errorf("titles: %+v, want text [\"plan\"] and structuredContent {\"result\":[\"plan\"]}", res)
			}

			// Failures are isError results with the text the loop gives the model.
			for _, c := range []struct{ name, args string }{
				{"add", `{"a":"two","b":40}`}, // argument error
				{"add", `[1,2]`},              // not an object at all
				{"get", `{"title":"nope"}`},   // the tool's own error
			} {
				want := drive.RunCall(ctx, local[c.name], onion.Call{Arguments: json.RawMessage(c.args)}, drive.CallConfig{})
				if want.Outcome != onion.Failed {
					t.Fatalf("local %s(%s): %+v, want it failed", c.name, c.args, want)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: json.RawMessage(c.args)})
				if err != nil {
					t.Fatalf("call %s(%s): %v", c.name, c.args, err)
				}
				// isError says what the loop's "error: " says.
				if !res.IsError || "error: "+text(t, res) != want.Output {
					t.Errorf("%s(%s) = %q (isError %v), want isError with %q without its \"error: \"", c.name, c.args, text(t, res), res.IsError, want.Output)
				}
			}

			// A panic is an isError result, and the server goes on serving.
			res3 := call("explode", `{}`)
			want := drive.RunCall(ctx, local["explode"], onion.Call{Arguments: json.RawMessage(`{}`)}, drive.CallConfig{})
			if !res3.IsError || text(t, res3) != want.Output || !strings.Contains(want.Output, "it panicked: kaboom") {
				t.Errorf("explode: %q (isError %v), want isError with %q", text(t, res3), res3.IsError, want.Output)
			}
			if res := call("get", `{"title":"plan"}`); res.IsError || text(t, res) != `{"title":"plan","body":"ship it"}` {
				t.Errorf("get after a panic: %+v", res)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	add := func(a, b int) int { return a + b }
	for _, c := range []struct {
		name  string
		items []any
		want  string
	}{
		{"nothing", nil, "no tools given"},
		{"only a name", []any{&mcp.Implementation{Name: "x"}}, "no tools given"},
		{"not a tool", []any{42}, "item 0 (int)"},
		{"duplicate", []any{mcptest.Add, mcptest.Add}, `two tools are named "add"`},
		{"nil implementation", []any{(*mcp.Implementation)(nil), add}, "nil *mcp.Implementation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := mcpserver.New(c.items...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// badJSON panics when encoded, after the tool has returned.
type badJSON struct{}

func (badJSON) MarshalJSON() ([]byte, error) { panic("cannot encode") }

// TestResultEdges covers results the SDK client must still get as results:
// a raw tool's JSON, an encoding that fails and one that panics.
func TestResultEdges(t *testing.T) {
	raw, err := onion.NewRawTool("raw", nil, func(context.Context, json.RawMessage) (any, error) {
		return json.RawMessage(`{"k":"v"}`), nil
	}, onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	unencodable, err := onion.NewRawTool("unencodable", nil, func(context.Context, json.RawMessage) (any, error) {
		return func() {}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	panicky, err := onion.NewRawTool("panicky", nil, func(context.Context, json.RawMessage) (any, error) {
		return badJSON{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(raw, unencodable, panicky)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ss.Close(); ss.Wait() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "raw"})
	if err != nil || res.IsError || text(t, res) != `{"k":"v"}` || !jsonEqual(t, res.StructuredContent, map[string]any{"k": "v"}) {
		t.Errorf("raw: %+v, %v", res, err)
	}
	for _, c := range []struct {
		tool *onion.Tool
		want string
	}{
		{unencodable, "error: encode result as JSON: json: unsupported type: func()"},
		{panicky, "error: encode result as JSON: a MarshalJSON or MarshalText method panicked: cannot encode"},
	} {
		local := drive.RunCall(ctx, c.tool, onion.Call{Arguments: json.RawMessage(`{}`)}, drive.CallConfig{})
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool.Name()})
		if err != nil || !res.IsError || "error: "+text(t, res) != local.Output || local.Output != c.want {
			t.Errorf("%s: %+v, %v; want isError with the loop's %q (%q)", c.tool.Name(), res, err, local.Output, c.want)
		}
	}
}

// appendLine appends a line to the journal.
//
// line: the text to add
func appendLine(line string) string { return "added" }

// TestWritesAreDestructiveUnlessAdditive: MCP reads destructiveHint false
// as "only additive updates", so a write is advertised destructive unless
// it says it only adds; the built-in write_file, which replaces a file,
// is destructive.
func TestWritesAreDestructiveUnlessAdditive(t *testing.T) {
	additive, err := onion.NewTool(appendLine, onion.Name("append_line"), onion.Additive())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := onion.NewTool(appendLine, onion.Name("plain_append"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := builtin.NewFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs := connectVersion(t, mcp.SupportedProtocolVersions()[0], nil, plain, additive, files)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"append_line": false, "plain_append": true, "write_file": true, "delete_file": true}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			continue
		}
		delete(want, tool.Name)
		if got := tool.Annotations.DestructiveHint; got == nil || *got != w {
			t.Errorf("%s: destructiveHint %v, want %v", tool.Name, got, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("tools not served: %v", want)
	}
}
