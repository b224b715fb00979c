package mcpserver_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion/mcp/internal/mcptest"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// TestHandlerSpeaksEveryProtocol connects the SDK's client over streamable
// HTTP on each protocol version it speaks, the newest included, with the
// default transport options and with options of the program's own.
func TestHandlerSpeaksEveryProtocol(t *testing.T) {
	for _, opts := range []struct {
		name string
		item []any
	}{
		{"Default", nil},
		{"JSONResponse", []any{mcpserver.HTTPOptions(&mcp.StreamableHTTPOptions{JSONResponse: true})}},
		{"Stateless", []any{mcpserver.HTTPOptions(&mcp.StreamableHTTPOptions{Stateless: true})}},
	} {
		for _, version := range mcp.SupportedProtocolVersions() {
			t.Run(opts.name+"/"+version, func(t *testing.T) {
				h, err := mcpserver.Handler(append(mcptest.Items(), opts.item...)...)
				if err != nil {
					t.Fatal(err)
				}
				hs := httptest.NewServer(h)
				defer hs.Close()
				ctx := context.Background()
				client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
				cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Errorf("negotiated %s, want %s", got, version)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
				if err != nil || res.IsError || text(t, res) != "5" {
					t.Errorf("add(2, 3) = %+v, %v", res, err)
				}
			})
		}
	}
}

// TestErrorsSayMcpserverOnce checks that errors name the package once,
// whatever layer they come from.
func TestErrorsSayMcpserverOnce(t *testing.T) {
	for _, items := range [][]any{
		nil,
		{(*mcp.Implementation)(nil)},
		{mcptest.Add, mcptest.Add},
		{42},
	} {
		_, err := mcpserver.Handler(items...)
		if err == nil {
			t.Fatalf("Handler(%v) = nil error", items)
		}
		if n := strings.Count(err.Error(), "mcpserver:"); n != 1 {
			t.Errorf("Handler(%v): %q names mcpserver %d times", items, err, n)
		}
		if err := mcpserver.ServeStdio(context.Background(), items...); err == nil || strings.Count(err.Error(), "mcpserver:") != 1 {
			t.Errorf("ServeStdio(%v): %v", items, err)
		}
	}
}

// waiter's Wait says when its call starts and when the call's context
// ends; release lets a call that was not canceled go.
type waiter struct{ started, ended, release chan struct{} }

// Wait waits until the call is canceled.
//
//onion:intent read
func (w *waiter) Wait(ctx context.Context) error {
	close(w.started)
	select {
	case <-ctx.Done():
		close(w.ended)
		return ctx.Err()
	case <-w.release:
		return nil
	}
}

// TestHandlerCancelsWhenTheClientGoes: on the newest protocol a client
// that closes its request's stream has canceled the call ("MUST treat a
// client disconnect as cancellation"), so the tool's context ends, with
// the default options and stateless ones.
func TestHandlerCancelsWhenTheClientGoes(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		for _, version := range mcp.SupportedProtocolVersions() {
			if version < "2026-07-28" {
				continue
			}
			t.Run(fmt.Sprintf("stateless=%v/%s", stateless, version), func(t *testing.T) {
				w := &waiter{started: make(chan struct{}), ended: make(chan struct{}), release: make(chan struct{})}
				h, err := mcpserver.Handler(w, mcpserver.HTTPOptions(&mcp.StreamableHTTPOptions{Stateless: stateless}))
				if err != nil {
					t.Fatal(err)
				}
				hs := httptest.NewServer(h)
				defer hs.Close()
				defer close(w.release) // before hs.Close, which waits for the call
				client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
				cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
					done <- err
				}()
				<-w.started
				cancel()
				<-done
				select {
				case <-w.ended:
				case <-time.After(10 * time.Second):
					t.Error("the tool's context did not end within 10s of the client closing its stream")
				}
			})
		}
	}
}

// echoLength returns the length of its text.
//
// text: any text
//
//onion:intent read
func echoLength(text string) int { return len(text) }

// TestHandlerTakesWhatStdioTakes: over HTTP a request may be as large as a
// message on stdio (16 MiB), not the SDK's 4 MiB; MaxRequestBodyBytes in
// HTTPOptions still sets it.
func TestHandlerTakesWhatStdioTakes(t *testing.T) {
	big := strings.Repeat("x", 6<<20)
	for _, tc := range []struct {
		name  string
		opts  *mcp.StreamableHTTPOptions
		taken bool
	}{
		{"default", nil, true},
		{"set lower", &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: 1 << 20}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := []any{echoLength}
			if tc.opts != nil {
				items = append(items, mcpserver.HTTPOptions(tc.opts))
			}
			h, err := mcpserver.Handler(items...)
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(h)
			defer hs.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
			cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo_length", Arguments: map[string]any{"text": big}})
			taken := err == nil && !res.IsError && text(t, res) == strconv.Itoa(len(big))
			if taken != tc.taken {
				t.Errorf("a %d-byte request taken: %v, want %v (err %v)", len(big), taken, tc.taken, err)
			}
		})
	}
}
