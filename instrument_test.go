package onion_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// tapeKey marks the contexts a tape hands out.
type tapeKey struct{}

// tape is an Instrument that writes down what it is told, and puts the
// name of what it started in the context it returns.
type tape struct {
	mu    sync.Mutex // guards lines
	lines []string
}

func (t *tape) add(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, fmt.Sprintf(format, args...))
}

func mark(ctx context.Context) string { s, _ := ctx.Value(tapeKey{}).(string); return s }

func (t *tape) StartRun(ctx context.Context, run onion.RunInfo) context.Context {
	t.add("start run %s model=%s provider=%s tools=%d prompt=%q", run.Agent, run.Model, run.Provider, len(run.Tools), run.Prompt)
	return context.WithValue(ctx, tapeKey{}, "run")
}

func (t *tape) EndRun(ctx context.Context, res *onion.Result, err error) {
	t.add("end run in %s: %s %v", mark(ctx), res.StopReason, err)
}

func (t *tape) StartModel(ctx context.Context, req *onion.Request) context.Context {
	t.add("start model in %s: %d messages", mark(ctx), len(req.Messages))
	return context.WithValue(ctx, tapeKey{}, "model")
}

func (t *tape) RetryModel(ctx context.Context, attempt int, err error, wait time.Duration) {
	t.add("retry in %s: attempt %d", mark(ctx), attempt)
}

func (t *tape) EndModel(ctx context.Context, resp *onion.Response, err error) {
	t.add("end model in %s: %v", mark(ctx), err == nil && resp != nil)
}

func (t *tape) StartTool(ctx context.Context, c onion.ToolCall) context.Context {
	t.add("start tool %s in %s", c.Name, mark(ctx))
	return context.WithValue(ctx, tapeKey{}, "tool "+c.Name)
}

func (t *tape) EndTool(ctx context.Context, c onion.ToolCall) {
	t.add("end %s: %s", mark(ctx), c.Outcome)
}

func TestInstrumentSeesTheRunAndGivesTheToolItsContext(t *testing.T) {
	tp := &tape{}
	var seen string
	probe, err := onion.NewTool(func(ctx context.Context, _ struct{}) (string, error) {
		seen = mark(ctx)
		return "ok", nil
	}, onion.Name("probe"), onion.Write)
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t,
		oniontest.Error(503, `{"error":{"message":"busy"}}`),
		oniontest.ToolCalls(oniontest.Call("probe", `{}`)),
		oniontest.Text("done"),
	)
	a, err := onion.NewAgent("bot", probe, onion.WithInstrument(tp), onion.BaseURL(s.URL()), onion.APIKey("k"),
		onion.Model("m"), onion.RetryBackoff(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if seen != "tool probe" {
		t.Errorf("the tool ran in the context %q, want StartTool's", seen)
	}
	want := []string{
		`start run bot model=m provider=openai tools=1 prompt="go"`,
		"start model in run: 2 messages",
		"retry in model: attempt 1",
		"end model in model: true",
		"start tool probe in run",
		"end tool probe: succeeded",
		"start model in run: 4 messages",
		"end model in model: true",
		"end run in run: natural <nil>",
	}
	if got := strings.Join(tp.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("the instrument was told:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
