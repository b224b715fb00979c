package temporal

import (
	"context"
	"slices"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/onionkit/onion"
)

// TestLocalSteps: by default every step of a run is a regular activity;
// with LocalSteps its model requests and reads are local activities, and
// its writes stay regular ones. The run ends the same either way.
func TestLocalSteps(t *testing.T) {
	for _, tc := range []struct {
		name           string
		opts           []StartOption
		local, regular []string
	}{
		{"default", nil, nil, []string{"model", "stock", "send", "model"}},
		{"LocalSteps", []StartOption{LocalSteps()}, []string{"model", "stock", "model"}, []string{"send"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &scripted{replies: []func(*onion.Request) (*onion.Response, error){
				calls("stock", `{}`, "send", `{}`), text("sent")}}
			stock := newTool(t, func(context.Context) (string, error) { return "12", nil }, onion.Name("stock"), onion.Description("Counts."), onion.Read)
			sendTool := newTool(t, func(context.Context) (string, error) { return "sent", nil }, onion.Name("send"), onion.Description("Sends."), onion.Write)
			e := env(t, newAgent(t, m, stock, sendTool))
			var mu sync.Mutex
			var local, regular []string
			step := func(info *activity.Info, call func() string) string {
				if info.ActivityType.Name == modelActivity {
					return "model"
				}
				return call()
			}
			e.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, args []any) {
				mu.Lock()
				defer mu.Unlock()
				if info.ActivityType.Name != approvalActivity {
					local = append(local, step(info, func() string { return args[0].(toolInput).Call.Name }))
				}
			})
			e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
				mu.Lock()
				defer mu.Unlock()
				regular = append(regular, step(info, func() string {
					var in toolInput
					if err := args.Get(&in); err != nil {
						t.Error(err)
					}
					return in.Call.Name
				}))
			})
			res := result(t, e, input("send it", tc.opts...))
			if res.Output != "sent" || outcomes(res) != "stock:succeeded send:succeeded" {
				t.Fatalf("answer %q, calls %s", res.Output, outcomes(res))
			}
			slices.Sort(local)
			slices.Sort(regular)
			slices.Sort(tc.local)
			slices.Sort(tc.regular)
			if !slices.Equal(local, tc.local) || !slices.Equal(regular, tc.regular) {
				t.Errorf("local activities %v, regular %v; want %v and %v", local, regular, tc.local, tc.regular)
			}
		})
	}
}
