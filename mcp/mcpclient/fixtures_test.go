package mcpclient_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpclient"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// message is a JSON-RPC message as the fake server sees it.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// fakeServer is a hand-rolled JSON-RPC peer that answers with the recorded
// fixtures, so that mcpclient is tested against messages no SDK produced.
type fakeServer struct {
	t     *testing.T
	in    *bufio.Scanner
	out   io.WriteCloser
	pages [][]byte // tools/list results: the first page, then the second
	calls map[string]string
	done  chan struct{}

	mu      sync.Mutex // guards cursors
	cursors []string   // the cursor of each tools/list request, "" for none
}

// fixtureResult returns the "result" member of a fixture.
func fixtureResult(t *testing.T, name string) json.RawMessage {
	t.Helper()
	var m message
	if err := json.Unmarshal(fixture(t, name), &m); err != nil {
		t.Fatal(err)
	}
	return m.Result
}

func (f *fakeServer) write(msg []byte) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		f.t.Errorf("fake server: compact: %v", err)
		return
	}
	buf.WriteByte('\n')
	f.out.Write(buf.Bytes())
}

func (f *fakeServer) reply(id json.RawMessage, member string, v json.RawMessage) {
	f.write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"` + member + `":` + string(v) + `}`))
}

// serve answers until the client hangs up or asks for the "greet" tool,
// which makes the server vanish mid-call.
func (f *fakeServer) serve() {
	defer close(f.done)
	defer f.out.Close()
	var pending json.RawMessage // a tools/call held until our ping is answered
	for f.in.Scan() {
		var m message
		if err := json.Unmarshal(f.in.Bytes(), &m); err != nil {
			f.t.Errorf("fake server: %v", err)
			return
		}
		switch m.Method {
		case "":
			// The answer to our ping, which reuses id 1 in our direction.
			if string(m.ID) == "1" && pending != nil {
				f.reply(pending, "result", json.RawMessage(`{"content":[{"type":"text","text":"deleted"}]}`))
				pending = nil
			}
		case "initialize":
			f.reply(m.ID, "result", fixtureResult(f.t, "initialize.result.json"))
		case "tools/list":
			var p struct{ Cursor string }
			json.Unmarshal(m.Params, &p)
			f.mu.Lock()
			f.cursors = append(f.cursors, p.Cursor)
			f.mu.Unlock()
			page := f.pages[0]
			if p.Cursor == "next-page-cursor" {
				page = f.pages[1]
			}
			f.reply(m.ID, "result", page)
		case "tools/call":
			var p struct{ Name string }
			json.Unmarshal(m.Params, &p)
			switch p.Name {
			case "greet":
				return
			case "delete_file":
				pending = m.ID
				f.write(fixture(f.t, "server_ping.request.json"))
			case "tomorrow":
				var e struct{ Error json.RawMessage }
				json.Unmarshal(fixture(f.t, "spec_unknown_tool.error.json"), &e)
				f.reply(m.ID, "error", e.Error)
			default:
				f.reply(m.ID, "result", fixtureResult(f.t, f.calls[p.Name]))
			}
		default:
			// Such as server/discover, which a 2024-11-05 server does not
			// know: the client then falls back to initialize.
			if m.ID != nil {
				f.reply(m.ID, "error", json.RawMessage(`{"code":-32601,"message":"method not found"}`))
			}
		}
	}
}

// TestFixtureServer reads the recorded tool lists (two pages, the second
// holding the go-sdk conformance tools and two github-mcp-server tools) and
// calls them with the recorded answers.
func TestFixtureServer(t *testing.T) {
	var second struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(fixtureResult(t, "tools_list.result.json"), &second); err != nil {
		t.Fatal(err)
	}
	second.Tools = append(second.Tools, fixture(t, "github_mcp_tool_get_file_contents.json"), fixture(t, "github_mcp_tool_delete_file.json"))
	page2, err := json.Marshal(second)
	if err != nil {
		t.Fatal(err)
	}

	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	sc := bufio.NewScanner(toServerR)
	sc.Buffer(nil, 1<<20)
	f := &fakeServer{
		t:     t,
		in:    sc,
		out:   fromServerW,
		pages: [][]byte{fixtureResult(t, "spec_tools_list.result.json"), page2},
		calls: map[string]string{
			"structured":  "tools_call_structured.result.json",
			"get_weather": "spec_tools_call_iserror.result.json",
		},
		done: make(chan struct{}),
	}
	go f.serve()
	defer func() { <-f.done }()
	defer toServerR.Close()

	ctx := context.Background()
	tools, err := mcpclient.Tools(ctx, &mcp.IOTransport{Reader: fromServerR, Writer: toServerW})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := onion.NewAgent("fixtures", tools)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := agent.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()

	f.mu.Lock()
	cursors := slices.Clone(f.cursors)
	f.mu.Unlock()
	if !reflect.DeepEqual(cursors, []string{"", "next-page-cursor"}) {
		t.Errorf("tools/list cursors = %q, want the first page then next-page-cursor", cursors)
	}

	byName := make(map[string]*onion.Tool)
	var names []string
	for _, tool := range tools {
		byName[tool.Name()] = tool
		names = append(names, tool.Name())
	}
	wantNames := []string{"get_weather", "greet", "inc", "structured", "tomorrow", "get_file_contents", "delete_file"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("tools = %q, want %q", names, wantNames)
	}

	// Intent, description and schema come from the server's definitions.
	for _, c := range []struct {
		name, fixture, desc string
		intent              onion.Intent
	}{
		{"get_file_contents", "github_mcp_tool_get_file_contents.json", "Get the contents of a file or directory from a GitHub repository", onion.Read},
		{"delete_file", "github_mcp_tool_delete_file.json", "Delete a file from a GitHub repository", onion.Delete},
	} {
		tool := byName[c.name]
		if tool.Intent() != c.intent {
			t.Errorf("%s: intent %s, want %s", c.name, tool.Intent(), c.intent)
		}
		if tool.Description() != c.desc {
			t.Errorf("%s: description %q, want %q", c.name, tool.Description(), c.desc)
		}
		var def struct{ InputSchema any }
		if err := json.Unmarshal(fixture(t, c.fixture), &def); err != nil {
			t.Fatal(err)
		}
		var got any
		if err := json.Unmarshal(tool.Schema(), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, def.InputSchema) {
			t.Errorf("%s: schema %v, want %v", c.name, got, def.InputSchema)
		}
	}
	for _, name := range []string{"get_weather", "greet", "inc", "structured", "tomorrow"} {
		if got := byName[name].Intent(); got != onion.Write {
			t.Errorf("%s has no annotations: intent %s, want write", name, got)
		}
	}
	if d := byName["get_weather"].Description(); d != "Get current weather information for a location" {
		t.Errorf("get_weather description = %q", d)
	}

	// A structured result reads as its text content.
	if out, err := byName["structured"].Call(ctx, `{"In":"input"}`); err != nil || out != `{"Out":"Ack input"}` {
		t.Errorf("structured = %q, %v", out, err)
	}
	// onion checks arguments against the server's schema before sending.
	if _, err := byName["structured"].Call(ctx, `{}`); !errors.Is(err, onion.ErrInvalidArguments) {
		t.Errorf("structured({}) error = %v, want invalid arguments", err)
	}
	// isError: the server's text, and the outcome is known.
	_, err = byName["get_weather"].Call(ctx, `{"location":"Paris"}`)
	if err == nil || err.Error() != "Failed to fetch weather data: API rate limit exceeded" || errors.Is(err, onion.ErrOutcomeUnknown) {
		t.Errorf("get_weather error = %v, want the server's text", err)
	}
	// A JSON-RPC error is a definite answer too.
	_, err = byName["tomorrow"].Call(ctx, `{"Now":"today"}`)
	if err == nil || errors.Is(err, onion.ErrOutcomeUnknown) {
		t.Errorf("tomorrow error = %v, want a plain failure", err)
	}
	// The server's ping mid-call, with an id the client also used, is
	// answered and the call completes.
	out, err := byName["delete_file"].Call(ctx, `{"owner":"o","repo":"r","path":"p","message":"m","branch":"b"}`)
	if err != nil || out != "deleted" {
		t.Errorf("delete_file = %q, %v", out, err)
	}
	// The server vanishes mid-call: nobody knows what happened.
	_, err = byName["greet"].Call(ctx, `{"Name":"x"}`)
	if !errors.Is(err, onion.ErrOutcomeUnknown) {
		t.Errorf("greet error = %v, want one wrapping onion.ErrOutcomeUnknown", err)
	}
}
