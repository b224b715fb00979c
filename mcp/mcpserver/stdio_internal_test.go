package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// readAll drains a messageReader over input and returns what it passed on
// and what it answered itself.
func readAll(t testing.TB, input string, maxLine int) (passed, answered []byte) {
	t.Helper()
	var out bytes.Buffer
	r := &messageReader{in: bufio.NewReaderSize(strings.NewReader(input), 16), out: &out, maxLine: maxLine}
	passed, err := io.ReadAll(r)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("read: %v", err)
	}
	return passed, out.Bytes()
}

func TestMessageReaderSkipsLongLines(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	long := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}`
	passed, answered := readAll(t, long+"\n"+ping+"\r\n"+ping, len(ping))
	if string(passed) != ping+"\n"+ping+"\n" {
		t.Errorf("passed %q, want both pings and not the long line", passed)
	}
	var msg struct {
		ID    any `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(answered, &msg); err != nil || msg.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(msg.Error.Message, "over 40 bytes") {
		t.Errorf("answered %q (%v), want one invalid request error naming the limit", answered, err)
	}
}

// FuzzMessageReader holds the reader to its promise on any input: what it
// passes on is JSON-RPC messages, one a line, and what it answers is
// JSON-RPC errors, one a line.
func FuzzMessageReader(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		"not json\n{}\n[]\n42\n\"x\"\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]` + "\r\n",
		`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`,
		"\n\n  \n\t",
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + strings.Repeat("y", 300),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		passed, answered := readAll(t, input, 128)
		for line := range bytes.Lines(passed) {
			line = bytes.TrimSuffix(line, []byte("\n"))
			if refusal(line) != nil {
				t.Errorf("passed on %q, which is no JSON-RPC message", line)
			}
		}
		for line := range bytes.Lines(answered) {
			var msg struct {
				JSONRPC string `json:"jsonrpc"`
				Error   *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &msg); err != nil || msg.JSONRPC != "2.0" || msg.Error == nil {
				t.Errorf("answered %q, which is no JSON-RPC error", line)
			}
		}
	})
}
