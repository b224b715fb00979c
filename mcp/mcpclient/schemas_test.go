package mcpclient_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpclient"
)

// schemaServer is a raw JSON-RPC MCP server publishing tools exactly as
// written (schemas the SDK's structs could not even hold, fields such as
// execution), and answering a call with its arguments.
type schemaServer struct {
	name  string
	tools []string // each tool's JSON, as published
	in    *bufio.Scanner
	out   io.WriteCloser

	mu    sync.Mutex // guards calls
	calls []string   // the arguments of each tools/call, as received
}

func (s *schemaServer) serve() {
	defer s.out.Close()
	for s.in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(s.in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"` + s.name + `","version":"1.0.0"}}`
		case "tools/list":
			result = `{"tools":[` + strings.Join(s.tools, ",") + `]}`
		case "tools/call":
			s.mu.Lock()
			s.calls = append(s.calls, string(m.Params.Arguments))
			s.mu.Unlock()
			text, _ := json.Marshal(string(m.Params.Arguments))
			result = `{"content":[{"type":"text","text":` + string(text) + `}]}`
		default:
			io.WriteString(s.out, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"method not found"}}`+"\n")
			continue
		}
		var line bytes.Buffer
		json.Compact(&line, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`))
		line.WriteByte('\n')
		s.out.Write(line.Bytes())
	}
}

func (s *schemaServer) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// connectSchemaServer starts s and connects mcpclient to it.
func connectSchemaServer(t *testing.T, s *schemaServer, opts ...mcpclient.Option) *mcpclient.Server {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	s.in, s.out = bufio.NewScanner(toServer), fromServer
	s.in.Buffer(nil, 1<<20)
	done := make(chan struct{})
	go func() { defer close(done); s.serve() }()
	srv, err := mcpclient.Connect(context.Background(), &mcp.IOTransport{Reader: toClient, Writer: fromClient}, opts...)
	if err != nil {
		fromClient.Close()
		<-done
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		<-done
	})
	return srv
}

// The schemas of item 5, as servers publish them.
const (
	// @modelcontextprotocol/server-sequential-thinking: draft-07, a list
	// of types.
	thinkingTool = `{"name":"sequentialthinking","description":"Think step by step.","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"thought":{"type":"string","description":"Your current thinking step"},"nextThoughtNeeded":{"description":"Whether another thought step is needed","type":["boolean","string"]},"thoughtNumber":{"type":"integer","minimum":1,"maximum":9007199254740991}},"required":["thought","nextThoughtNeeded","thoughtNumber"]},"annotations":{"readOnlyHint":true,"idempotentHint":true}}`
	// The common nullable form.
	nullableTool = `{"name":"annotate","description":"Annotate.","inputSchema":{"type":"object","properties":{"note":{"type":["string","null"]}},"required":["note"]}}`
	// Draft-04's boolean exclusiveMinimum, declared and not.
	draft4Tool           = `{"name":"positive","description":"Take a positive number.","inputSchema":{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["n"]}}`
	draft4UndeclaredTool = `{"name":"positive_undeclared","description":"Take a positive number.","inputSchema":{"type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["n"]}}`
	// @modelcontextprotocol/server-pdf's interact: 2020-12, a list of
	// types deep in an array of objects.
	pdfTool = `{"name":"interact","description":"Drive the viewer.","inputSchema":{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"viewUUID":{"type":"string"},"fields":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"value":{"type":["string","boolean"]}},"required":["name","value"]}}},"required":["viewUUID"]}}`
	// Tools that cannot be offered.
	misspeltTool = `{"name":"misspelt","description":"Broken.","inputSchema":{"type":"object","properties":{"x":{"type":"strnig"}}}}`
	taskTool     = `{"name":"simulate-research-query","description":"Runs as a task.","inputSchema":{"type":"object","properties":{"topic":{"type":"string"}}},"execution":{"taskSupport":"required"}}`
)

// TestLegalSchemasAreKept connects to a server whose tools use legal JSON
// Schema that onion used to refuse, and to tools that cannot be used: the
// server connects, every legal tool is offered with its schema as the
// server sent it and validated by it, and the others are left out with a
// warning.
func TestLegalSchemasAreKept(t *testing.T) {
	var logs bytes.Buffer
	s := &schemaServer{name: "schemas", tools: []string{thinkingTool, nullableTool, draft4Tool, draft4UndeclaredTool, pdfTool, misspeltTool, taskTool}}
	srv := connectSchemaServer(t, s, mcpclient.Logger(slog.New(slog.NewTextHandler(&logs, nil))))
	tools := toolMap(srv.Tools)

	published := func(tool string) string {
		var v struct{ InputSchema json.RawMessage }
		json.Unmarshal([]byte(tool), &v)
		var b bytes.Buffer
		json.Compact(&b, v.InputSchema)
		return b.String()
	}
	for name, want := range map[string]string{
		"sequentialthinking":  published(thinkingTool),
		"annotate":            published(nullableTool),
		"positive":            published(draft4Tool),
		"interact":            published(pdfTool),
		"positive_undeclared": `{"$schema":"http://json-schema.org/draft-04/schema#",` + published(draft4UndeclaredTool)[1:],
	} {
		tool, ok := tools[name]
		if !ok {
			t.Errorf("tool %q not offered; have %v", name, srv.Tools)
			continue
		}
		if got := string(tool.Schema()); got != want {
			t.Errorf("%s schema\n got %s\nwant %s", name, got, want)
		}
	}
	if tool := tools["sequentialthinking"]; tool != nil && (tool.Intent() != onion.Read || !tool.Idempotent()) {
		t.Errorf("sequentialthinking intent %v, idempotent %v", tool.Intent(), tool.Idempotent())
	}

	ctx := context.Background()
	for _, c := range []struct {
		tool, args string
		ok         bool
	}{
		{"sequentialthinking", `{"thought":"a","nextThoughtNeeded":"true","thoughtNumber":1}`, true},
		{"sequentialthinking", `{"thought":"a","nextThoughtNeeded":false,"thoughtNumber":1}`, true},
		{"sequentialthinking", `{"thought":"a","nextThoughtNeeded":3,"thoughtNumber":1}`, false},
		{"annotate", `{"note":null}`, true},
		{"annotate", `{"note":"x"}`, true},
		{"annotate", `{"note":1}`, false},
		{"positive", `{"n":0.5}`, true},
		{"positive", `{"n":0}`, false},
		{"positive_undeclared", `{"n":0}`, false},
		{"interact", `{"viewUUID":"v","fields":[{"name":"agree","value":true},{"name":"who","value":"me"}]}`, true},
		{"interact", `{"viewUUID":"v","fields":[{"name":"agree","value":1}]}`, false},
	} {
		tool := tools[c.tool]
		if tool == nil {
			continue
		}
		before := len(s.received())
		out, err := tool.Call(ctx, c.args)
		sent := len(s.received()) > before
		var argErr *onion.ArgumentError
		switch {
		case c.ok && (err != nil || !sent || out != c.args):
			t.Errorf("%s(%s) = %q, %v (sent %v); want it sent as it is", c.tool, c.args, out, err, sent)
		case !c.ok && (!errors.As(err, &argErr) || sent):
			t.Errorf("%s(%s) = %q, %v (sent %v); want an argument error, nothing sent", c.tool, c.args, out, err, sent)
		}
	}

	left := map[string]string{}
	for _, lo := range srv.LeftOut {
		left[lo.Tool] = lo.Reason
		if lo.Server != srv.Name || !strings.Contains(lo.Error(), lo.Tool) {
			t.Errorf("left out %+v: %q", lo, lo.Error())
		}
	}
	if len(left) != 2 || !strings.Contains(left["misspelt"], "schema") || !strings.Contains(left["simulate-research-query"], "task") {
		t.Errorf("left out %v; want misspelt (its schema) and simulate-research-query (a task)", left)
	}
	for _, name := range []string{"misspelt", "simulate-research-query"} {
		if tools[name] != nil || tools[strings.ReplaceAll(name, "-", "_")] != nil {
			t.Errorf("%s is offered, though it cannot be used", name)
		}
		if !strings.Contains(logs.String(), name) || !strings.Contains(logs.String(), "left out") {
			t.Errorf("no warning about %s in the log:\n%s", name, logs.String())
		}
	}
}
