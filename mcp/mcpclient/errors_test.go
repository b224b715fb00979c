package mcpclient_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/internal/mcptest"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// TestErrorsNameTheServer checks that errors say which server, by its
// serverInfo name and its command, in plain words, naming mcpclient at
// most once.
func TestErrorsNameTheServer(t *testing.T) {
	t.Run("ExitsAtOnce", func(t *testing.T) {
		falseBin, err := exec.LookPath("false")
		if err != nil {
			t.Skip("no false command")
		}
		_, err = mcpclient.Command(context.Background(), falseBin, "--flag")
		if err == nil {
			t.Fatal("connected to a program that exits at once")
		}
		msg := err.Error()
		t.Log(msg)
		if !strings.Contains(msg, "false --flag") || !strings.Contains(msg, "exit status 1") || strings.Count(msg, "mcpclient:") != 1 {
			t.Errorf("error %q; want the command, how it exited, and mcpclient named once", msg)
		}
	})
	t.Run("DiesMidCall", func(t *testing.T) {
		cmd := mcptest.Command()
		started := newSignal(mcptest.HangStarted)
		cmd.Stderr = started
		srv, err := mcpclient.ConnectCommand(context.Background(), cmd)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		if !strings.HasPrefix(srv.Name, `MCP server "onion" (`) || !strings.Contains(srv.Name, "-test.run=^$") {
			t.Errorf("server named %q; want its serverInfo name and its command", srv.Name)
		}
		go func() {
			<-started.seen
			cmd.Process.Kill()
		}()
		_, err = toolMap(srv.Tools)["hang"].Call(context.Background(), `{"job":"backup"}`)
		if !errors.Is(err, onion.ErrOutcomeUnknown) {
			t.Fatalf("error = %v, want one wrapping onion.ErrOutcomeUnknown", err)
		}
		msg := err.Error()
		t.Log(msg)
		if !strings.Contains(msg, srv.Name) || strings.Contains(msg, "mcpclient:") {
			t.Errorf("error %q; want one plain sentence naming %s", msg, srv.Name)
		}
		if strings.Contains(msg, "EOF") || strings.Contains(msg, "jsonrpc") || strings.Contains(msg, "calling") {
			t.Errorf("error %q shows the SDK's internals to the model", msg)
		}
	})
	t.Run("HTTP", func(t *testing.T) {
		h, err := mcpserver.Handler(mcptest.Items()...)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(h)
		defer hs.Close()
		srv, err := mcpclient.ConnectHTTP(context.Background(), hs.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		if srv.Name != `MCP server "onion" (`+hs.URL+`)` {
			t.Errorf("server named %q", srv.Name)
		}
	})
}

// TestConnectFailureEndsTheCommand gives up connecting to a program that
// never answers: the program does not outlive the failed connect.
func TestConnectFailureEndsTheCommand(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	cmd := exec.Command(sleep, "600")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the connect's context has ended before any answer
	_, err = mcpclient.ConnectCommand(ctx, cmd)
	if err == nil {
		t.Fatal("connected to sleep")
	}
	t.Log(err)
	if cmd.Process != nil && alive(cmd.Process.Pid) {
		t.Errorf("sleep (pid %d) still runs after the failed connect", cmd.Process.Pid)
		cmd.Process.Kill()
	}
}
