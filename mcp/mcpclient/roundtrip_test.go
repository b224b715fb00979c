package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/mcp/internal/mcptest"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/mcp/mcpserver"
	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

// serveInMemory serves the test tools over the SDK's in-memory transport
// and returns the client's end. The server session ends with the test.
func serveInMemory(t *testing.T) mcp.Transport {
	t.Helper()
	srv, err := mcpserver.New(mcptest.Items()...)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	return ct
}

// remoteTools returns the test tools as mcpclient gives them, from a server
// reached over the named transport. The context of the connection ends
// before remoteTools returns: the session must outlive it.
func remoteTools(t *testing.T, transport string) []*onion.Tool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		tools []*onion.Tool
		err   error
	)
	switch transport {
	case "memory":
		tools, err = mcpclient.Tools(ctx, serveInMemory(t))
	case "stdio":
		tools, err = mcpclient.Tools(ctx, &mcp.CommandTransport{Command: mcptest.Command()})
	case "http":
		h, herr := mcpserver.Handler(mcptest.Items()...)
		if herr != nil {
			t.Fatal(herr)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		tools, err = mcpclient.HTTP(ctx, hs.URL)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func toolMap(tools []*onion.Tool) map[string]*onion.Tool {
	m := make(map[string]*onion.Tool)
	for _, t := range tools {
		m[t.Name()] = t
	}
	return m
}

// lastToolMessage is the tool result the agent sent back in its last
// request to the model.
func lastToolMessage(t *testing.T, s *oniontest.Server) openai.ChatCompletionMessage {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("the agent sent no request")
	}
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) == 0 {
		t.Fatalf("no tool message in the last request: %+v", reqs[len(reqs)-1].Body.Messages)
	}
	return results[len(results)-1]
}

// TestRoundTrip serves onion tools with mcpserver, takes them back with
// mcpclient and checks that an agent sees what it would see locally.
func TestRoundTrip(t *testing.T) {
	for _, transport := range []string{"memory", "stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			ctx := context.Background()
			remote := toolMap(remoteTools(t, transport))
			local := make(map[string]*onion.Tool)
			for _, item := range mcptest.Items() {
				ts, err := onion.ToolsFrom(item)
				if err != nil {
					t.Fatal(err)
				}
				for _, lt := range ts {
					local[lt.Name()] = lt
				}
			}
			if len(remote) != len(local) {
				t.Errorf("got %d tools, want %d", len(remote), len(local))
			}
			for name, lt := range local {
				rt, ok := remote[name]
				if !ok {
					t.Errorf("tool %q missing", name)
					continue
				}
				var a, b any
				json.Unmarshal(lt.Schema(), &a)
				json.Unmarshal(rt.Schema(), &b)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s: schema %s, want %s", name, rt.Schema(), lt.Schema())
				}
				if rt.Description() != lt.Description() || rt.Intent() != lt.Intent() || rt.Idempotent() != lt.Idempotent() {
					t.Errorf("%s: got (%q, %s, idempotent %v), want (%q, %s, idempotent %v)", name,
						rt.Description(), rt.Intent(), rt.Idempotent(), lt.Description(), lt.Intent(), lt.Idempotent())
				}
			}

			s := oniontest.NewServer(t,
				oniontest.ToolCalls(
					oniontest.Call("save", `{"title":"plan","body":"ship it"}`),
					oniontest.Call("add", `{"a":2,"b":40}`),
				),
				oniontest.ToolCalls(oniontest.Call("get", `{"title":"plan"}`)),
				oniontest.ToolCalls(oniontest.Call("get", `{"title":"nope"}`)),
				oniontest.ToolCalls(oniontest.Call("explode", `{}`), oniontest.Call("save", `{"title":"late","body":"never"}`)),
				oniontest.ToolCalls(oniontest.Call("titles", `{}`)),
				oniontest.Text("done"),
			)
			agent, err := onion.NewAgent("roundtrip", remote["save"], remote["add"], remote["get"], remote["explode"], remote["titles"],
				onion.BaseURL(s.URL()), onion.APIKey("test-key"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := agent.Run(ctx, "use the tools")
			if err != nil {
				t.Fatal(err)
			}
			if err := agent.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if err := agent.Close(); err != nil {
				t.Errorf("second close: %v", err)
			}
			if res.Output != "done" {
				t.Errorf("answer = %q", res.Output)
			}
			// A tool served and consumed back reads exactly like the local
			// one: what onion.RunCall gives for it here. A write cut on the
			// server (explode panics) is outcome_unknown there, and here
			// too, in the same words, so the write after it in the same
			// response is skipped and never reaches the server (titles
			// still lists one note).
			localCall := func(name, args string) onion.ToolCall {
				return drive.RunCall(ctx, local[name], onion.Call{Arguments: json.RawMessage(args)}, drive.CallConfig{})
			}
			exploded := localCall("explode", `{}`)
			want := []struct {
				name    string
				outcome onion.Outcome
				output  string
			}{
				{"save", onion.Succeeded, `{"title":"plan","body":"ship it"}`},
				{"add", onion.Succeeded, "42"},
				{"get", onion.Succeeded, `{"title":"plan","body":"ship it"}`},
				{"get", onion.Failed, localCall("get", `{"title":"nope"}`).Output},
				{"explode", onion.OutcomeUnknown, exploded.Output},
				{"save", onion.Skipped, ""},
				{"titles", onion.Succeeded, `["plan"]`},
			}
			if len(res.ToolCalls) != len(want) {
				t.Fatalf("tool calls = %+v", res.ToolCalls)
			}
			for i, w := range want {
				got := res.ToolCalls[i]
				output := got.Output
				if w.outcome == onion.Skipped && strings.HasPrefix(output, onion.SkippedPrefix) {
					output = ""
				}
				if got.Name != w.name || got.Outcome != w.outcome || output != w.output {
					t.Errorf("call %d = (%s, %s, %q), want (%s, %s, %q)", i, got.Name, got.Outcome, got.Output, w.name, w.outcome, w.output)
				}
			}
			if got := res.ToolCalls[4]; got.Error != exploded.Error || strings.Count(got.Output, "outcome unknown") != 1 ||
				strings.Count(got.Output, "it panicked: kaboom") != 1 || strings.Contains(got.Output, "error: ") {
				t.Errorf("explode: output %q, error %q; want the server's words once, as the local %q, %q", got.Output, got.Error, exploded.Output, exploded.Error)
			}
			// What the model was sent: the last tool message before "done".
			if msg := lastToolMessage(t, s); msg.Content != `["plan"]` {
				t.Errorf("last tool message = %q, want [\"plan\"]", msg.Content)
			}
			// The first response's results went back as two tool messages.
			reqs := s.Requests()
			var contents []string
			for _, m := range reqs[1].ToolResults() {
				contents = append(contents, m.Content)
			}
			if !reflect.DeepEqual(contents, []string{`{"title":"plan","body":"ship it"}`, "42"}) {
				t.Errorf("tool messages of the first round = %q", contents)
			}

			// After Close, calls fail plainly: they never left the process.
			_, err = remote["add"].Call(ctx, `{"a":1,"b":1}`)
			if err == nil || errors.Is(err, onion.ErrOutcomeUnknown) {
				t.Errorf("call after close: %v, want a plain error", err)
			}
		})
	}
}

// signal is an io.Writer (a subprocess's stderr) that closes a channel when
// a given line has been written.
type signal struct {
	line string
	once sync.Once
	seen chan struct{}

	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func newSignal(line string) *signal { return &signal{line: line, seen: make(chan struct{})} }

func (s *signal) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	if strings.Contains(s.buf.String(), s.line) {
		s.once.Do(func() { close(s.seen) })
	}
	return len(p), nil
}

// killedMidCall starts the stdio test server, returns its tools, and a
// func that waits until Hang has started in the server and kills it.
func killedMidCall(t *testing.T) ([]*onion.Tool, func()) {
	t.Helper()
	cmd := mcptest.Command()
	started := newSignal(mcptest.HangStarted)
	cmd.Stderr = started
	tools, err := mcpclient.Tools(context.Background(), &mcp.CommandTransport{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	return tools, func() {
		<-started.seen
		if err := cmd.Process.Kill(); err != nil {
			t.Errorf("kill: %v", err)
		}
	}
}

// TestServerKilledMidCall kills the stdio server while a tool runs in it.
func TestServerKilledMidCall(t *testing.T) {
	t.Run("call", func(t *testing.T) {
		tools, kill := killedMidCall(t)
		hang := toolMap(tools)["hang"]
		go kill()
		_, err := hang.Call(context.Background(), `{"job":"backup"}`)
		if !errors.Is(err, onion.ErrOutcomeUnknown) {
			t.Errorf("error = %v, want one wrapping onion.ErrOutcomeUnknown", err)
		}
		// The server is gone: the next call fails without being sent.
		_, err = toolMap(tools)["add"].Call(context.Background(), `{"a":1,"b":2}`)
		if err == nil || errors.Is(err, onion.ErrOutcomeUnknown) {
			t.Errorf("call after the server died: %v, want a plain error", err)
		}
		// Closing the session of a dead server is quiet, and so is closing
		// it again.
		for i := range 2 {
			if err := closeTools(tools); err != nil {
				t.Errorf("close %d: %v", i+1, err)
			}
		}
	})
	t.Run("agent", func(t *testing.T) {
		tools, kill := killedMidCall(t)
		s := oniontest.NewServer(t,
			oniontest.ToolCalls(oniontest.Call("hang", `{"job":"backup"}`)),
			oniontest.Text("I could not tell whether the backup started."),
		)
		agent, err := onion.NewAgent("killed", tools, onion.BaseURL(s.URL()), onion.APIKey("test-key"))
		if err != nil {
			t.Fatal(err)
		}
		defer agent.Close()
		go kill()
		res, err := agent.Run(context.Background(), "start the backup")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.OutcomeUnknown {
			t.Fatalf("tool calls = %+v, want one outcome_unknown", res.ToolCalls)
		}
		if msg := lastToolMessage(t, s); !strings.HasPrefix(msg.Content, "outcome unknown") {
			t.Errorf("tool message = %q, want it to say the outcome is unknown", msg.Content)
		}
	})
}

// closeTools closes the session the tools share, as Agent.Close does.
func closeTools(tools []*onion.Tool) error {
	agent, err := onion.NewAgent("closer", tools, onion.APIKey("unused"))
	if err != nil {
		return err
	}
	return agent.Close()
}
