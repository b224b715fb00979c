package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// TestDefaultToolTimeout checks that a served tool's call is bounded by
// onion.DefaultToolTimeout when the server sets no ToolTimeout, as in an
// agent, by the ToolTimeout given otherwise, and by none with
// ToolTimeout(0): it reads the deadline the tool's context carries.
func TestDefaultToolTimeout(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []any
		want time.Duration // the bound the tool sees; 0 for none
	}{
		{"Default", nil, onion.DefaultToolTimeout},
		{"Longer", []any{mcpserver.ToolTimeout(time.Hour)}, time.Hour},
		{"None", []any{mcpserver.ToolTimeout(0)}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			left := make(chan time.Duration, 1)
			probe, err := onion.NewTool(func(ctx context.Context, _ struct{}) (string, error) {
				d, ok := ctx.Deadline()
				if !ok {
					left <- 0
					return "no deadline", nil
				}
				left <- time.Until(d)
				return "a deadline", nil
			}, onion.Name("probe"), onion.Read)
			if err != nil {
				t.Fatal(err)
			}
			cs := connectVersion(t, protocols[len(protocols)-1], nil, append([]any{probe}, tt.opts...)...)
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			// A minute of slack: the check is which bound applies, not how
			// fast the call started.
			if got := <-left; tt.want == 0 && got != 0 || tt.want != 0 && (got <= tt.want-time.Minute || got > tt.want) {
				t.Errorf("the tool's context had %v left, want the bound %v", got, tt.want)
			}
		})
	}
}
