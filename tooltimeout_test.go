package onion_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/oniontest"
)

// TestDefaultToolTimeout checks that an agent that sets no ToolTimeout
// still bounds every call, by DefaultToolTimeout, on the path a call takes
// (the deadline the tool's context carries), that an explicit ToolTimeout
// replaces it and ToolTimeout(0) removes it.
func TestDefaultToolTimeout(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []any
		want time.Duration // the bound the tool sees; 0 for none
	}{
		{"Default", nil, onion.DefaultToolTimeout},
		{"Longer", []any{onion.ToolTimeout(time.Hour)}, time.Hour},
		{"None", []any{onion.ToolTimeout(0)}, 0},
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
			s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("probe", `{}`)), oniontest.Text("ok"))
			a := newAgent(t, s, append([]any{probe}, tt.opts...)...)
			if got := drive.CallConfigOf(a).Timeout; got != tt.want {
				t.Errorf("CallConfig().Timeout = %v, want %v", got, tt.want)
			}
			if _, err := a.Run(context.Background(), "go"); err != nil {
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

// TestToolTimeoutCutsABlockedTool checks that a call that blocks forever,
// deaf to its context, is cut off when the timeout passes and the run goes
// on (a tiny ToolTimeout, so that the test does not wait the default's
// five minutes).
func TestToolTimeoutCutsABlockedTool(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // lets the abandoned call end
	stuck, err := onion.NewTool(func(_ context.Context, _ struct{}) (string, error) {
		<-release
		return "released", nil
	}, onion.Name("stuck"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("stuck", `{}`)), oniontest.Text("ok"))
	res, err := newAgent(t, s, stuck, onion.ToolTimeout(time.Millisecond)).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	c := res.ToolCalls[0]
	if c.Outcome != onion.Failed || !strings.Contains(toolMessages(t, s, 1)[c.ID], "timed out after 1ms") || res.Output != "ok" {
		t.Errorf("call = %+v, answer %q; want it cut off by the timeout and the run finished", c, res.Output)
	}
}
