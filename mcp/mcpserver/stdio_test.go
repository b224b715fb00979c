package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/onionkit/onion/mcp/internal/mcptest"
)

// TestStdioAnswersMalformedLines feeds a real stdio server lines that are
// not JSON-RPC messages between real ones: each gets its JSON-RPC error
// and the session goes on.
func TestStdioAnswersMalformedLines(t *testing.T) {
	cmd := mcptest.Command()
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	exchange := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write %s: %v", line, err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s: %v", line, lines.Err())
		}
		var msg map[string]any
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
			t.Fatalf("answer to %s is not JSON: %q", line, lines.Bytes())
		}
		return msg
	}
	wantError := func(msg map[string]any, code float64, id any) {
		t.Helper()
		e, _ := msg["error"].(map[string]any)
		if e == nil || e["code"] != code || msg["id"] != id || msg["jsonrpc"] != "2.0" {
			t.Errorf("answer %v, want a JSON-RPC error %v for id %v", msg, code, id)
		}
	}

	wantError(exchange(`not json`), -32700, nil)
	wantError(exchange(`{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {`), -32700, nil)
	init := exchange(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	if init["id"] != float64(7) || init["result"] == nil {
		t.Fatalf("initialize answered %v", init)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	wantError(exchange(`{"id":8,"method":"ping"}`), -32600, float64(8))
	wantError(exchange(`42`), -32600, nil)
	wantError(exchange(`[]`), -32600, nil)
	if ping := exchange(`{"jsonrpc":"2.0","id":9,"method":"ping"}`); ping["id"] != float64(9) || ping["error"] != nil {
		t.Errorf("ping after the malformed lines answered %v", ping)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("server exit: %v; a client that goes away ends it cleanly", err)
	}
}
