package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// protocols are the protocol versions approval is tested on: every one the
// SDK speaks, the newest (2026-07-28), where the server answers a call with
// an input request, and the older ones, where it sends elicitation/create
// in the middle of the call.
var protocols = mcp.SupportedProtocolVersions()

type payArgs struct {
	Amount int `json:"amount"`
}

// payTool is a tool that needs approval and counts its runs.
func payTool(t *testing.T, runs *atomic.Int32) *onion.Tool {
	t.Helper()
	tool, err := onion.NewTool(func(payArgs) string { runs.Add(1); return "paid" },
		onion.Name("pay"), onion.Description("Pay an amount."), onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// connectVersion connects an SDK client with opts, on the given protocol
// version, to a server of items over an in-memory connection.
func connectVersion(t *testing.T, version string, opts *mcp.ClientOptions, items ...any) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := mcpserver.New(items...)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol %s, want %s", got, version)
	}
	return cs
}

func callPay(t *testing.T, cs *mcp.ClientSession) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pay", Arguments: map[string]any{"amount": 5}})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	return res
}

// wantDenied checks that res is the loop's denial, says so in its _meta,
// and that the tool never ran.
func wantDenied(t *testing.T, res *mcp.CallToolResult, runs *atomic.Int32) {
	t.Helper()
	want := onion.DeniedText
	if r, _ := res.Meta["io.github.onionkit/reason"].(string); strings.HasPrefix(r, "approver failed: ") {
		// Nobody said no: the text says why nobody was asked.
		want = "the call needed approval and nobody could be asked (" + strings.TrimPrefix(r, "approver failed: ") + "), so the tool did not run. Do not call it again unless the user asks for it."
	}
	if !res.IsError || text(t, res) != want || runs.Load() != 0 {
		t.Errorf("isError %v, text %q, runs %d; want the call denied with %q and never run", res.IsError, text(t, res), runs.Load(), want)
	}
	if o := res.Meta["io.github.onionkit/outcome"]; o != "denied" {
		t.Errorf("_meta outcome %v, want denied", o)
	}
}

// answer is an elicitation handler that answers every question with
// action and content, and counts the questions.
func answer(asked *atomic.Int32, action string, content map[string]any) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: action, Content: content}, nil
	}
}

func TestApprovalThroughElicitation(t *testing.T) {
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			t.Run("Accepted", func(t *testing.T) {
				var runs, asked atomic.Int32
				cs := connectVersion(t, version, &mcp.ClientOptions{ElicitationHandler: answer(&asked, "accept", map[string]any{"approve": true})}, payTool(t, &runs))
				res := callPay(t, cs)
				if res.IsError || text(t, res) != "paid" || runs.Load() != 1 || asked.Load() != 1 {
					t.Errorf("isError %v, text %q, runs %d, asked %d; want it asked once and run once", res.IsError, text(t, res), runs.Load(), asked.Load())
				}
			})
			t.Run("AcceptedWithoutContent", func(t *testing.T) {
				var runs, asked atomic.Int32
				cs := connectVersion(t, version, &mcp.ClientOptions{ElicitationHandler: answer(&asked, "accept", nil)}, payTool(t, &runs))
				if res := callPay(t, cs); res.IsError || runs.Load() != 1 {
					t.Errorf("isError %v, runs %d; an accepted form with its default must run the call once", res.IsError, runs.Load())
				}
			})
			for _, c := range []struct {
				name    string
				action  string
				content map[string]any
			}{
				{"Declined", "decline", nil},
				{"Canceled", "cancel", nil},
				{"AcceptedUnticked", "accept", map[string]any{"approve": false}},
			} {
				t.Run(c.name, func(t *testing.T) {
					var runs, asked atomic.Int32
					cs := connectVersion(t, version, &mcp.ClientOptions{ElicitationHandler: answer(&asked, c.action, c.content)}, payTool(t, &runs))
					wantDenied(t, callPay(t, cs), &runs)
					if asked.Load() != 1 {
						t.Errorf("asked %d times, want once", asked.Load())
					}
				})
			}
			t.Run("NoCapability", func(t *testing.T) {
				var runs atomic.Int32
				cs := connectVersion(t, version, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, payTool(t, &runs))
				res := callPay(t, cs)
				wantDenied(t, res, &runs)
				if got := text(t, res); !strings.Contains(got, "nobody could be asked (the MCP client cannot be asked: it has no elicitation capability)") {
					t.Errorf("a client that cannot be asked reads %q: nobody denied the call", got)
				}
			})
			t.Run("HandlerFails", func(t *testing.T) {
				var runs atomic.Int32
				fail := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return nil, errors.New("no user here")
				}
				cs := connectVersion(t, version, &mcp.ClientOptions{ElicitationHandler: fail}, payTool(t, &runs))
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pay", Arguments: map[string]any{"amount": 5}})
				if err == nil && !res.IsError || runs.Load() != 0 {
					t.Errorf("result %+v, err %v, runs %d; want the call not run", res, err, runs.Load())
				}
			})
		})
	}
}

// TestApprovalTimeoutOlderProtocol leaves the question unanswered past the
// approval timeout: elicitation/create is abandoned and the call denied.
func TestApprovalTimeoutOlderProtocol(t *testing.T) {
	var runs atomic.Int32
	release := make(chan struct{})
	wait := func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}
	cs := connectVersion(t, "2025-11-25", &mcp.ClientOptions{ElicitationHandler: wait}, payTool(t, &runs), mcpserver.ApprovalTimeout(time.Millisecond))
	wantDenied(t, callPay(t, cs), &runs)
	close(release)
}

// TestApprovalTimeoutNewestProtocol answers the input request only after
// the approval timeout has passed: the retried call is denied.
func TestApprovalTimeoutNewestProtocol(t *testing.T) {
	var runs atomic.Int32
	clock := &fakeClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	late := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		clock.Advance(time.Minute + time.Second)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}
	cs := connectVersion(t, "2026-07-28", &mcp.ClientOptions{ElicitationHandler: late},
		payTool(t, &runs), mcpserver.ApprovalTimeout(time.Minute), mcpserver.Clock(clock.Now))
	wantDenied(t, callPay(t, cs), &runs)
}

// TestApprovalCannotBeForged sends, on the newest protocol, an answer to a
// question the server never asked, and one to a question about other
// arguments: neither runs the call.
func TestApprovalCannotBeForged(t *testing.T) {
	var runs, asked atomic.Int32
	cs := connectVersion(t, "2026-07-28", &mcp.ClientOptions{
		ElicitationHandler: answer(&asked, "accept", map[string]any{"approve": true}),
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}, payTool(t, &runs))
	ctx := context.Background()
	yes := mcp.InputResponseMap{"onion_approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: map[string]any{"amount": 5}, InputResponses: yes, RequestState: "made-up"})
	if err != nil {
		t.Fatal(err)
	}
	wantDenied(t, res, &runs)

	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: map[string]any{"amount": 5}})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || len(first.InputRequests) != 1 || runs.Load() != 0 {
		t.Fatalf("first call: needs input %v, requests %v, runs %d; want one question and no run", first.NeedsInput(), first.InputRequests, runs.Load())
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: map[string]any{"amount": 5000}, InputResponses: yes, RequestState: first.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	wantDenied(t, res, &runs)

	// The question was consumed by the attempt above: it cannot answer twice.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: map[string]any{"amount": 5}, InputResponses: yes, RequestState: first.RequestState})
	if err != nil {
		t.Fatal(err)
	}
	wantDenied(t, res, &runs)
}

// TestApprovalOverHTTP asks through elicitation on both protocols over
// streamable HTTP, the newest of which Handler serves statelessly.
func TestApprovalOverHTTP(t *testing.T) {
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			var runs, asked atomic.Int32
			h, err := mcpserver.Handler(payTool(t, &runs))
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(h)
			defer hs.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"},
				&mcp.ClientOptions{ElicitationHandler: answer(&asked, "accept", map[string]any{"approve": true})})
			cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			res := callPay(t, cs)
			if res.IsError || runs.Load() != 1 || asked.Load() != 1 {
				t.Errorf("isError %v (%q), runs %d, asked %d; want asked once, run once", res.IsError, text(t, res), runs.Load(), asked.Load())
			}
		})
	}
}

// TestApproverOption decides with the program's own approver, which sees
// the call, and never asks the client.
func TestApproverOption(t *testing.T) {
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			for _, c := range []struct {
				name    string
				approve func(context.Context, onion.Call) (bool, error)
				runs    int32
			}{
				{"Yes", func(_ context.Context, c onion.Call) (bool, error) {
					return c.Name == "pay" && string(c.Arguments) == `{"amount":5}`, nil
				}, 1},
				{"No", func(context.Context, onion.Call) (bool, error) { return false, nil }, 0},
				{"Fails", func(context.Context, onion.Call) (bool, error) { return true, errors.New("broken") }, 0},
				{"Panics", func(context.Context, onion.Call) (bool, error) { panic("approver bug") }, 0},
			} {
				t.Run(c.name, func(t *testing.T) {
					var runs, asked atomic.Int32
					cs := connectVersion(t, version, &mcp.ClientOptions{ElicitationHandler: answer(&asked, "accept", nil)},
						payTool(t, &runs), mcpserver.Approver(c.approve))
					res := callPay(t, cs)
					if c.runs == 0 {
						wantDenied(t, res, &runs)
					} else if res.IsError || runs.Load() != c.runs {
						t.Errorf("isError %v (%q), runs %d; want %d", res.IsError, text(t, res), runs.Load(), c.runs)
					}
					if asked.Load() != 0 {
						t.Errorf("the client was asked %d times; the approver decides alone", asked.Load())
					}
				})
			}
		})
	}
}

// TestNoApprovalNeeded runs a tool without approval settings without
// asking anyone.
func TestNoApprovalNeeded(t *testing.T) {
	for _, version := range protocols {
		t.Run(version, func(t *testing.T) {
			var asked atomic.Int32
			cs := connectVersion(t, version, &mcp.ClientOptions{ElicitationHandler: answer(&asked, "decline", nil)}, mcpserverTestAdd)
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(list.Tools) != 1 {
				t.Fatalf("tools %v, %v", list, err)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: list.Tools[0].Name, Arguments: map[string]any{"a": 1, "b": 2}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || asked.Load() != 0 {
				t.Errorf("isError %v (%q), asked %d; want it run without a question", res.IsError, text(t, res), asked.Load())
			}
		})
	}
}

// mcpserverTestAdd returns a + b.
func mcpserverTestAdd(in struct {
	A int `json:"a"`
	B int `json:"b"`
}) int {
	return in.A + in.B
}

// TestShellAsksBeforeRunning serves builtin.NewShell, the issue's own case:
// a command runs only when the client's user accepts, on both protocols.
func TestShellAsksBeforeRunning(t *testing.T) {
	for _, version := range protocols {
		for _, c := range []struct {
			name string
			opts *mcp.ClientOptions
			ran  bool
		}{
			{"Accepted", &mcp.ClientOptions{ElicitationHandler: answer(new(atomic.Int32), "accept", map[string]any{"approve": true})}, true},
			{"Declined", &mcp.ClientOptions{ElicitationHandler: answer(new(atomic.Int32), "decline", nil)}, false},
			{"NoCapability", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, false},
		} {
			t.Run(version+"/"+c.name, func(t *testing.T) {
				marker := filepath.Join(t.TempDir(), "ran")
				cs := connectVersion(t, version, c.opts, builtin.NewShell())
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "touch " + marker}})
				if err != nil {
					t.Fatal(err)
				}
				_, statErr := os.Stat(marker)
				if ran := statErr == nil; ran != c.ran {
					t.Errorf("the command ran: %v, want %v (result %q, isError %v)", ran, c.ran, text(t, res), res.IsError)
				}
				if got := text(t, res); !c.ran && got != onion.DeniedText && !strings.HasPrefix(got, "the call needed approval and nobody could be asked (") {
					t.Errorf("result %q, want the denial", text(t, res))
				}
			})
		}
	}
}

// TestApproverSeesTheCall gives the approver the call as the loop would:
// an id of its own for each call, the tool's name and intent, the
// arguments ({} for none) and the first attempt; the tool reads the same
// call with onion.CallInfo.
func TestApproverSeesTheCall(t *testing.T) {
	var mu sync.Mutex
	var asked, ran []onion.Call
	approve := func(_ context.Context, c onion.Call) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, c)
		return true, nil
	}
	tool, err := onion.NewTool(func(ctx context.Context) string {
		c, _ := onion.CallInfo(ctx)
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, c)
		return "done"
	}, onion.Name("reboot"), onion.Delete, onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	cs := connectVersion(t, protocols[0], nil, tool, mcpserver.Approver(approve))
	for _, args := range []json.RawMessage{nil, json.RawMessage(`null`)} {
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "reboot", Arguments: args}); err != nil || res.IsError {
			t.Fatalf("call: %+v, %v", res, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || len(ran) != 2 {
		t.Fatalf("asked %d times, ran %d times; want 2 and 2", len(asked), len(ran))
	}
	for i, c := range asked {
		if c.ID == "" || c.Name != "reboot" || c.Intent != onion.Delete || string(c.Arguments) != "{}" || c.Attempt != 1 {
			t.Errorf("the approver saw %+v; want an id, reboot, delete, {} and attempt 1", c)
		}
		if r := ran[i]; r.ID != c.ID || r.Name != c.Name {
			t.Errorf("the tool saw call %+v, the approver %+v; want the same call", r, c)
		}
	}
	if asked[0].ID == asked[1].ID {
		t.Errorf("two calls share the id %q", asked[0].ID)
	}
}
