package main

import (
	"bufio"
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onionkit/onion"
)

// connect connects an MCP SDK client with opts through transport.
func connect(t *testing.T, transport mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, opts).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// callText calls the tool name with args and returns its text and isError.
func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func toolNames(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return strings.Join(names, " ")
}

// elicit answers every approval question with action, and counts them.
func elicit(action string, asked *int) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		*asked++
		return &mcp.ElicitResult{Action: action, Content: map[string]any{"approve": action == "accept"}}, nil
	}
}

// TestServeStdio drives onion serve over stdio with the MCP SDK's client:
// the tools are listed and called, state is kept between calls, and a call
// that needs approval runs only once the client's user says yes.
func TestServeStdio(t *testing.T) {
	t.Run("Tools", func(t *testing.T) {
		cmd := cli{}.command(t, "serve", "-tools", "todo")
		cmd.Stdin = nil
		cs := connect(t, &mcp.CommandTransport{Command: cmd}, nil)
		defer cs.Close()
		if got := toolNames(t, cs); got != "add complete list remove" {
			t.Errorf("tools %q", got)
		}
		if text, isErr := callText(t, cs, "add", map[string]any{"text": "buy milk"}); isErr || text != `{"id":1,"text":"buy milk","done":false}` {
			t.Errorf("add: %q, isError %v", text, isErr)
		}
		if text, _ := callText(t, cs, "list", nil); text != `[{"id":1,"text":"buy milk","done":false}]` {
			t.Errorf("list after add: %q", text)
		}
		if text, isErr := callText(t, cs, "add", map[string]any{"txt": "x"}); !isErr || !strings.Contains(text, "text: required field is missing") {
			t.Errorf("add with bad arguments: %q, isError %v", text, isErr)
		}
	})
	for _, c := range []struct {
		action string
		ran    bool
	}{{"accept", true}, {"decline", false}} {
		t.Run("Approval_"+c.action, func(t *testing.T) {
			cmd := cli{}.command(t, "serve", "-tools", "shell")
			cmd.Stdin = nil
			var asked int
			cs := connect(t, &mcp.CommandTransport{Command: cmd}, &mcp.ClientOptions{ElicitationHandler: elicit(c.action, &asked)})
			defer cs.Close()
			text, isErr := callText(t, cs, "run_command", map[string]any{"command": "echo approved"})
			if asked != 1 {
				t.Errorf("asked %d times, want once", asked)
			}
			if c.ran && (isErr || !strings.HasPrefix(text, "approved\n")) {
				t.Errorf("accepted: %q, isError %v; want the command's output", text, isErr)
			}
			if !c.ran && (!isErr || text != onion.DeniedText) {
				t.Errorf("declined: %q, isError %v; want the denial", text, isErr)
			}
		})
	}
}

// TestServeHTTP serves over streamable HTTP on a port of the system's
// choosing, at each form of loopback address, is driven by the SDK's
// client, and stops cleanly on SIGINT.
func TestServeHTTP(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		t.Run(addr, func(t *testing.T) {
			cmd := cli{}.command(t, "serve", "-tools", "todo", "-http", addr)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(stderr)
			if !lines.Scan() {
				cmd.Wait()
				t.Fatalf("no line on stderr; exit %d", cmd.ProcessState.ExitCode())
			}
			url, ok := strings.CutPrefix(lines.Text(), "onion serve: MCP at ")
			if !ok || !strings.HasSuffix(url, "/mcp") {
				t.Fatalf("first line %q, want where it serves", lines.Text())
			}
			cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url}, nil)
			if got := toolNames(t, cs); got != "add complete list remove" {
				t.Errorf("tools %q", got)
			}
			if text, isErr := callText(t, cs, "add", map[string]any{"text": "tea"}); isErr || !strings.Contains(text, `"text":"tea"`) {
				t.Errorf("add: %q, isError %v", text, isErr)
			}
			cs.Close()
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			for lines.Scan() {
				t.Logf("stderr: %s", lines.Text())
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("after SIGINT: %v; want exit status 0", err)
			}
		})
	}
}

// TestServeHTTPRefusesPublicAddress checks that -http will not listen on
// an address other hosts can reach without -http-public: the tools have no
// authentication there, and their callers would approve their own calls.
func TestServeHTTPRefusesPublicAddress(t *testing.T) {
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		// The first line on stderr says whether it serves; a command
		// that does is stopped rather than waited for.
		cmd := cli{}.command(t, "serve", "-tools", "todo", "-http", addr)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stderr)
		first := ""
		if lines.Scan() {
			first = lines.Text()
		}
		if strings.HasPrefix(first, "onion serve: MCP at ") {
			cmd.Process.Kill()
		}
		for lines.Scan() {
		}
		cmd.Wait()
		want := "onion serve: -http " + addr + " is not a loopback address: anyone who can reach it could call the tools, with no authentication"
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.HasPrefix(first, want) || !strings.Contains(first, "add -http-public") {
			t.Errorf("-http %s: exit %d, stderr %q; want 2 and why, with the way out", addr, code, first)
		}
	}
	if got := (cli{}).onion(t, "serve", "-tools", "todo", "-http-public"); got.code != 2 || !strings.Contains(got.stderr, "-http-public needs -http ADDR") {
		t.Errorf("-http-public alone: exit %d, stderr %q; want 2", got.code, got.stderr)
	}
}
