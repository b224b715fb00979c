package mcpserver_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
)

type commandArgs struct {
	Command string `json:"command"`
}

// commandTool is a tool that needs approval and counts its runs.
func commandTool(t *testing.T, runs *atomic.Int32) *onion.Tool {
	t.Helper()
	tool, err := onion.NewTool(func(commandArgs) string { runs.Add(1); return "ran" },
		onion.Name("run"), onion.Description("Run a command."), onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestApprovalQuestionShowsWhatRuns asks the host about calls whose
// arguments try to hide what runs, on every protocol: the message shows
// the whole of the arguments, with what a terminal would act on or a
// reader would not see escaped, and arguments too long to show are not
// asked about but denied, saying why.
func TestApprovalQuestionShowsWhatRuns(t *testing.T) {
	pad := strings.Repeat("a", 600)
	for _, version := range protocols {
		for _, c := range []struct {
			name, command string
			shown         string // in the message, or "" when nobody may be asked
		}{
			{"Padded", "echo " + pad + "; touch /tmp/x", `{"command":"echo ` + pad + `; touch /tmp/x"}`},
			{"Escapes", "echo hi\x1b[2K\r\x1b]8;;http://x\x1b\\ok\u202e\u2066; touch /tmp/x",
				`{"command":"echo hi\u001b[2K\r\u001b]8;;http://x\u001b\\ok\u202e\u2066; touch /tmp/x"}`},
			{"TooLong", strings.Repeat("a", 40000) + "; touch /tmp/x", ""},
		} {
			t.Run(version+"/"+c.name, func(t *testing.T) {
				var runs, asked atomic.Int32
				var mu sync.Mutex // guards message
				var message string
				ask := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					mu.Lock()
					message = req.Params.Message
					mu.Unlock()
					return &mcp.ElicitResult{Action: "decline"}, nil
				}
				cs := connectVersion(t, version, &mcp.ClientOptions{ElicitationHandler: ask}, commandTool(t, &runs))
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"command": c.command}})
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				wantDenied(t, res, &runs)
				mu.Lock()
				defer mu.Unlock()
				if c.shown == "" {
					reason, _ := res.Meta["io.github.onionkit/reason"].(string)
					if asked.Load() != 0 || !strings.Contains(reason, "too long to show (at most 32768), so the MCP client is not asked") {
						t.Errorf("asked %d times, reason %q; want none and the arguments too long to show", asked.Load(), reason)
					}
					return
				}
				if want := "The agent wants to run run (write) with " + c.shown + ". Allow it?"; message != want {
					t.Errorf("the host was asked\n%q\nwant\n%q", message, want)
				}
			})
		}
	}
}
