package devserver_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// TestKeysUniqueAcrossRuns: two executions that reuse one closed workflow
// ID, whose model repeats its call ID, give their calls different
// idempotency keys (an API that dedupes on the key would drop the second
// run's write); a model's call ID of 10,000 characters never reaches the
// key.
func TestKeysUniqueAcrossRuns(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	_, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.ToolCall{ID: "c1", Name: "stock", Arguments: `{"SKU":"A1"}`}), oniontest.Text("3."),
		oniontest.ToolCalls(oniontest.ToolCall{ID: "c1", Name: "stock", Arguments: `{"SKU":"A1"}`}), oniontest.Text("3."),
		oniontest.ToolCalls(oniontest.ToolCall{ID: long, Name: "stock", Arguments: `{"SKU":"A1"}`}), oniontest.Text("3."))
	var mu sync.Mutex
	var keys []string
	serveAgent(t, c, model, "keys", func(ctx context.Context, tool string) (string, error) {
		call, _ := onion.CallInfo(ctx)
		mu.Lock()
		keys = append(keys, call.IdempotencyKey)
		mu.Unlock()
		return "3", nil
	})
	for range 3 {
		run, err := temporal.Start(context.Background(), c, "keys", testagent.Name, "How many A1?", temporal.WorkflowID("reused"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := temporal.Result(context.Background(), run); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 3 || keys[0] == keys[1] || keys[1] == keys[2] || keys[0] == keys[2] {
		t.Errorf("keys %q: want three different keys", keys)
	}
	for _, k := range keys {
		if strings.Contains(k, "xxxxxxxx") || len(k) > 128 || !strings.HasPrefix(k, "reused/") {
			t.Errorf("key %.200q: want the workflow ID's and no text of the model's, bounded", k)
		}
	}
}
