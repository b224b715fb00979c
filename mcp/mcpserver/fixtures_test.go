package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// StructuredIn and StructuredOut mirror the go-sdk conformance test's
// "structured" tool, so that its recorded answers can be compared with ours.
type StructuredIn struct {
	In string `json:"In"`
}

// StructuredOut is the result of the structured tool.
type StructuredOut struct {
	Out string `json:"Out"`
}

// structured acknowledges its input.
func structured(in StructuredIn) StructuredOut { return StructuredOut{Out: "Ack " + in.In} }

// wire is a raw JSON-RPC peer of a server: the test writes the fixtures'
// requests line by line and reads the server's answers.
type wire struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

func (w *wire) send(msg []byte) {
	w.t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		w.t.Fatalf("compact %s: %v", msg, err)
	}
	buf.WriteByte('\n')
	if _, err := w.in.Write(buf.Bytes()); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

func (w *wire) recv() map[string]any {
	w.t.Helper()
	if !w.out.Scan() {
		w.t.Fatalf("no answer from the server: %v", w.out.Err())
	}
	return decode(w.t, w.out.Bytes())
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

// shape is v with every value replaced by its JSON type, so that two
// messages of the same structure compare equal whatever their values.
func shape(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = shape(e)
		}
		return m
	case []any:
		if len(v) == 0 {
			return []any{}
		}
		return []any{shape(v[0])}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "?"
}

// TestFixtureReplay plays the go-sdk conformance client's messages to a
// server made by New and checks the answers against the SDK server's
// recorded ones.
func TestFixtureReplay(t *testing.T) {
	tool, err := onion.NewTool(structured, onion.Name("structured"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(&mcp.Implementation{Name: "testServer", Version: "v1.0.0"}, tool)
	if err != nil {
		t.Fatal(err)
	}
	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: toServerR, Writer: fromServerW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		toServerW.Close()
		ss.Close()
		ss.Wait()
		fromServerR.Close()
	})
	sc := bufio.NewScanner(fromServerR)
	sc.Buffer(nil, 1<<20)
	w := &wire{t: t, in: toServerW, out: sc}

	// initialize, at the fixture's protocol version.
	w.send(fixture(t, "initialize.request.json"))
	got := w.recv()
	want := decode(t, fixture(t, "initialize.result.json"))
	gr, wr := got["result"].(map[string]any), want["result"].(map[string]any)
	for _, k := range []string{"protocolVersion", "serverInfo"} {
		if !reflect.DeepEqual(gr[k], wr[k]) {
			t.Errorf("initialize result %s = %v, want %v", k, gr[k], wr[k])
		}
	}
	if caps, _ := gr["capabilities"].(map[string]any); caps["tools"] == nil {
		t.Errorf("initialize result announces no tools capability: %v", gr["capabilities"])
	}
	if got["id"] != want["id"] {
		t.Errorf("initialize answered id %v, want %v", got["id"], want["id"])
	}

	w.send(fixture(t, "initialized.notification.json"))

	// tools/list without params.
	w.send(fixture(t, "tools_list.request.json"))
	got = w.recv()
	tools := got["result"].(map[string]any)["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools/list returned %d tools, want 1: %v", len(tools), got)
	}
	var wantTool map[string]any
	for _, tt := range decode(t, fixture(t, "tools_list.result.json"))["result"].(map[string]any)["tools"].([]any) {
		if tt.(map[string]any)["name"] == "structured" {
			wantTool = tt.(map[string]any)
		}
	}
	gotTool := tools[0].(map[string]any)
	if gotTool["name"] != "structured" {
		t.Errorf("tool name = %v", gotTool["name"])
	}
	var schema any
	if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotTool["inputSchema"], schema) {
		t.Errorf("inputSchema = %v, want the agent's %v", gotTool["inputSchema"], schema)
	}
	// The SDK's own tool has the same input shape, less the description
	// its jsonschema tag adds.
	wantIn := wantTool["inputSchema"].(map[string]any)
	delete(wantIn["properties"].(map[string]any)["In"].(map[string]any), "description")
	if !reflect.DeepEqual(shape(gotTool["inputSchema"]), shape(wantIn)) {
		t.Errorf("inputSchema shape = %v, want %v", shape(gotTool["inputSchema"]), shape(wantIn))
	}
	if a, _ := gotTool["annotations"].(map[string]any); a["readOnlyHint"] != true {
		t.Errorf("annotations = %v, want readOnlyHint true", gotTool["annotations"])
	}
	// The output schema too: the same object shape as the SDK's, whose
	// descriptions come from other tags.
	gotOut, _ := gotTool["outputSchema"].(map[string]any)
	wantOut := wantTool["outputSchema"].(map[string]any)
	delete(gotOut, "description")
	delete(wantOut["properties"].(map[string]any)["Out"].(map[string]any), "description")
	if !reflect.DeepEqual(shape(gotOut), shape(wantOut)) {
		t.Errorf("outputSchema shape = %v, want %v", shape(gotOut), shape(wantOut))
	}

	// tools/call with a structured result: the very answer the SDK gave.
	w.send(fixture(t, "tools_call.request.json"))
	got = w.recv()
	want = decode(t, fixture(t, "tools_call_structured.result.json"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tools/call structured:\n got %v\nwant %v", got, want)
	}

	// tools/call with arguments that do not fit: an isError result of the
	// fixture's shape, carrying onion's argument error.
	w.send([]byte(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"structured","arguments":{}}}`))
	got = w.recv()
	want = decode(t, fixture(t, "tools_call_iserror.result.json"))
	if !reflect.DeepEqual(shape(got), shape(want)) {
		t.Errorf("tools/call error shape:\n got %v\nwant %v", shape(got), shape(want))
	}
	local := drive.RunCall(ctx, tool, onion.Call{Arguments: json.RawMessage("{}")}, drive.CallConfig{})
	if local.Outcome != onion.Failed {
		t.Fatalf("local call with {}: %+v, want it failed", local)
	}
	content := got["result"].(map[string]any)["content"].([]any)
	// isError says what the loop's "error: " says.
	if text := content[0].(map[string]any)["text"]; text != strings.TrimPrefix(local.Output, "error: ") {
		t.Errorf("error text = %q, want the loop's %q without its \"error: \"", text, local.Output)
	}

	// tools/call without params is a protocol error.
	w.send([]byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call"}`))
	got = w.recv()
	want = decode(t, fixture(t, "tools_call_missing_params.error.json"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tools/call without params:\n got %v\nwant %v", got, want)
	}
}
