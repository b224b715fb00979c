package devserver_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// TestDurableRunRefused: a reply the provider refused ends a durable run
// as it ends a live one: StopRefused, an error wrapping onion.ErrRefused,
// and the reply's tool call never run.
func TestDurableRunRefused(t *testing.T) {
	filtered := `{"id":"chatcmpl-f","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"",` +
		`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"stock","arguments":"{\"SKU\":\"A1\"}"}}]},"finish_reason":"content_filter"}]}`
	_, model, c := crashSetup(t, oniontest.Replay("application/json", []byte(filtered)))
	var ran atomic.Int32
	serveAgent(t, c, model, "refused", func(ctx context.Context, tool string) (string, error) { ran.Add(1); return "3", nil })
	res, err := temporal.Run(context.Background(), c, "refused", testagent.Name, "How many boxes?")
	if !errors.Is(err, onion.ErrRefused) || res == nil || res.StopReason != onion.StopRefused {
		t.Fatalf("result %+v, err %v", res, err)
	}
	if n := ran.Load(); n != 0 || len(res.ToolCalls) != 0 {
		t.Errorf("%d tool runs, %d calls recorded: a refused reply's calls must not run", n, len(res.ToolCalls))
	}
}
