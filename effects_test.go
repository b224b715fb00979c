package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/oniontest"
)

// ledger records the writes that ran, in order.
type ledger struct {
	mu      sync.Mutex
	entries []string
	fail    string
}

// Append adds an entry to the ledger.
//
// entry: the text to add
func (l *ledger) Append(entry string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if entry == l.fail {
		return errors.New("the ledger refused " + entry)
	}
	l.entries = append(l.entries, entry)
	return nil
}

// Refund pays money back.
//
// amount: how much to refund
//
//onion:approve
func (l *ledger) Refund(amount int) error { return l.Append("refund") }

func (l *ledger) got() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.entries, ",")
}

func appends(entries ...string) oniontest.Step {
	var calls []oniontest.ToolCall
	for _, e := range entries {
		calls = append(calls, oniontest.Call("append", `{"entry":"`+e+`"}`))
	}
	return oniontest.ToolCalls(calls...)
}

func TestWritesRunInModelOrder(t *testing.T) {
	l := &ledger{}
	s := oniontest.NewServer(t, appends("a", "b", "c"), oniontest.Text("done"))
	res, err := newAgent(t, s, l).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if l.got() != "a,b,c" {
		t.Errorf("writes ran as %s, want a,b,c", l.got())
	}
	for _, c := range res.ToolCalls {
		if c.Outcome != onion.Succeeded || c.Intent != onion.Write {
			t.Errorf("call %+v", c)
		}
	}
}

func TestFailedWriteSkipsTheRest(t *testing.T) {
	l := &ledger{fail: "a"}
	s := oniontest.NewServer(t, appends("a", "b", "c"), oniontest.Text("done"))
	res, err := newAgent(t, s, l).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if l.got() != "" {
		t.Errorf("writes after the failed one ran: %s", l.got())
	}
	msgs := toolMessages(t, s, 1)
	want := []onion.Outcome{onion.Failed, onion.Skipped, onion.Skipped}
	for i, c := range res.ToolCalls {
		if c.Outcome != want[i] {
			t.Errorf("call %d ended %s, want %s", i, c.Outcome, want[i])
		}
		if i > 0 && !strings.HasPrefix(msgs[c.ID], "the tool did not run, so it is safe to call again") {
			t.Errorf("call %d message = %q", i, msgs[c.ID])
		}
	}
}

func TestApprovalFailsClosed(t *testing.T) {
	l := &ledger{}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("refund", `{"amount":5}`)), oniontest.Text("done"))
	res, err := newAgent(t, s, l).Run(context.Background(), "refund")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.ToolCalls[0]; c.Outcome != onion.Denied || l.got() != "" {
		t.Errorf("outcome %s, ledger %q", c.Outcome, l.got())
	}
	if msg := toolMessages(t, s, 1)[res.ToolCalls[0].ID]; !strings.Contains(msg, "denied") {
		t.Errorf("model was told %q", msg)
	}
}

func TestApprovalYesRunsOnce(t *testing.T) {
	l := &ledger{}
	var asked []onion.Call
	approve := onion.Approver(func(_ context.Context, c onion.Call) (bool, error) {
		asked = append(asked, c)
		return true, nil
	})
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("refund", `{"amount":5}`)), oniontest.Text("done"))
	res, err := newAgent(t, s, l, approve).Run(context.Background(), "refund")
	if err != nil {
		t.Fatal(err)
	}
	if res.ToolCalls[0].Outcome != onion.Succeeded || l.got() != "refund" || len(asked) != 1 {
		t.Fatalf("outcome %s, ledger %q, asked %d", res.ToolCalls[0].Outcome, l.got(), len(asked))
	}
	if c := asked[0]; c.Name != "refund" || string(c.Arguments) != `{"amount":5}` || c.RunID != res.RunID {
		t.Errorf("approver got %+v", c)
	}
}

func TestTerminalApprover(t *testing.T) {
	for _, tc := range []struct {
		answer string
		ran    bool
	}{{"y\n", true}, {"n\n", false}, {"", false}} {
		l := &ledger{}
		var out strings.Builder
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("refund", `{"amount":5}`)), oniontest.Text("done"))
		a := newAgent(t, s, l, onion.Approver(onion.TerminalApprover(strings.NewReader(tc.answer), &out)))
		if _, err := a.Run(context.Background(), "refund"); err != nil {
			t.Fatal(err)
		}
		if ran := l.got() == "refund"; ran != tc.ran || !strings.Contains(out.String(), "refund") {
			t.Errorf("answer %q: ran %v, prompt %q", tc.answer, ran, out.String())
		}
	}
}

func TestApproveIfPanicMeansAsk(t *testing.T) {
	var ran, asked atomic.Int32
	tool, err := onion.NewTool(func(struct{}) error { ran.Add(1); return nil }, onion.Name("pay"),
		onion.ApproveIf(func(context.Context, onion.Call) (bool, error) { panic("predicate bug") }))
	if err != nil {
		t.Fatal(err)
	}
	approve := onion.Approver(func(context.Context, onion.Call) (bool, error) { asked.Add(1); return false, nil })
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("pay", `{}`)), oniontest.Text("done"))
	res, err := newAgent(t, s, tool, approve).Run(context.Background(), "pay")
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 1 || ran.Load() != 0 || res.ToolCalls[0].Outcome != onion.Denied {
		t.Errorf("asked %d, ran %d, outcome %s", asked.Load(), ran.Load(), res.ToolCalls[0].Outcome)
	}
}

func TestIdempotentWriteRetriedWithTheSameKey(t *testing.T) {
	var mu sync.Mutex
	var seen []onion.Call
	tool, err := onion.NewTool(func(ctx context.Context, _ struct{}) error {
		c, ok := onion.CallInfo(ctx)
		if !ok {
			return errors.New("no call info")
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, c)
		if len(seen) == 1 {
			return errors.New("flaky")
		}
		return nil
	}, onion.Name("charge"), onion.Idempotent())
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("charge", `{}`)), oniontest.Text("done"))
	res, err := newAgent(t, s, tool, onion.ToolRetries(2)).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || res.ToolCalls[0].Outcome != onion.Succeeded || res.ToolCalls[0].Attempts != 2 {
		t.Fatalf("attempts %d, call %+v", len(seen), res.ToolCalls[0])
	}
	if seen[0].IdempotencyKey == "" || seen[0].IdempotencyKey != seen[1].IdempotencyKey || seen[0].Attempt != 1 || seen[1].Attempt != 2 || seen[0].ID != seen[1].ID {
		t.Errorf("attempts saw %+v and %+v", seen[0], seen[1])
	}
}

func TestPlainWriteRunsOnce(t *testing.T) {
	var ran atomic.Int32
	tool, err := onion.NewTool(func(struct{}) error { ran.Add(1); return errors.New("flaky") }, onion.Name("send"))
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("send", `{}`)), oniontest.Text("done"))
	if _, err := newAgent(t, s, tool, onion.ToolRetries(3)).Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 1 {
		t.Errorf("a non-idempotent write ran %d times", ran.Load())
	}
}

func TestWriteCutByTimeoutIsOutcomeUnknown(t *testing.T) {
	tool, err := onion.NewTool(func(ctx context.Context, _ struct{}) error {
		<-ctx.Done()
		return ctx.Err()
	}, onion.Name("transfer"))
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("transfer", `{}`)), oniontest.Text("done"))
	res, err := newAgent(t, s, tool, onion.ToolTimeout(20*time.Millisecond)).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	c := res.ToolCalls[0]
	if c.Outcome != onion.OutcomeUnknown || !strings.Contains(toolMessages(t, s, 1)[c.ID], "nobody knows whether it took effect") {
		t.Errorf("call = %+v", c)
	}
}

func TestReadRetried(t *testing.T) {
	var n atomic.Int32
	tool, err := onion.NewTool(func(struct{}) (string, error) {
		if n.Add(1) < 3 {
			return "", errors.New("try again")
		}
		return "got it", nil
	}, onion.Name("fetch"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("fetch", `{}`)), oniontest.Text("done"))
	res, err := newAgent(t, s, tool, onion.ToolRetries(2)).Run(context.Background(), "go")
	if err != nil || res.ToolCalls[0].Outcome != onion.Succeeded || n.Load() != 3 {
		t.Errorf("err %v, call %+v, attempts %d", err, res.ToolCalls[0], n.Load())
	}
}

// TestOutputCapped: the text the model reads fits MaxToolOutput, marker
// included; when the marker does not fit, the text is cut bare.
func TestOutputCapped(t *testing.T) {
	tool, err := onion.NewTool(func(struct{}) string { return strings.Repeat("x", 100) }, onion.Name("big"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit int
		want  string
	}{
		{60, strings.Repeat("x", 19) + "\n[output cut: 81 of 100 bytes not shown]"},
		{10, strings.Repeat("x", 10)},
	} {
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("big", `{}`)), oniontest.Text("done"))
		res, err := newAgent(t, s, tool, onion.MaxToolOutput(tc.limit)).Run(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if out := res.ToolCalls[0].Output; out != tc.want || len(out) > tc.limit {
			t.Errorf("MaxToolOutput(%d): output = %q, want %q", tc.limit, out, tc.want)
		}
	}
}

func TestTerminalApproverKeepsTheLineOfACanceledQuestion(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out strings.Builder
	approve := onion.TerminalApprover(pr, &out)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ok, err := approve(ctx, onion.Call{Name: "first"}); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled question: %v, %v", ok, err)
	}
	go pw.Write([]byte("y\n"))
	if ok, err := approve(context.Background(), onion.Call{Name: "second"}); !ok || err != nil {
		t.Errorf("second question: %v, %v", ok, err)
	}
}

func TestToolThatExitsItsGoroutine(t *testing.T) {
	tool, err := onion.NewTool(func(struct{}) error { runtime.Goexit(); return nil }, onion.Name("vanish"))
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("vanish", `{}`)), oniontest.Text("done"))
	res, err := newAgent(t, s, tool).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.ToolCalls[0]; c.Outcome != onion.OutcomeUnknown || !strings.Contains(c.Output, "Goexit") {
		t.Errorf("call = %+v", c)
	}
}

// todo is a tool instance whose read must see the writes listed before it.
type todo struct {
	mu    sync.Mutex
	items []string
	// slow, when not nil, holds Add until it is closed.
	slow chan struct{}
	// added is closed when a slow Add has started.
	added chan struct{}
}

// Add adds an item.
//
// item: what to add
func (d *todo) Add(item string) error {
	if d.slow != nil {
		close(d.added)
		<-d.slow
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.items = append(d.items, item)
	return nil
}

// Total counts the items.
//
//onion:intent read
func (d *todo) Total() (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.items), nil
}

// TestReadSeesTheWritesBeforeIt runs the model's [add, add, total] many
// times: total runs after both adds, every time.
func TestReadSeesTheWritesBeforeIt(t *testing.T) {
	for i := range 200 {
		d := &todo{}
		s := oniontest.NewServer(t, oniontest.ToolCalls(
			oniontest.Call("add", `{"item":"a"}`), oniontest.Call("add", `{"item":"b"}`), oniontest.Call("total", `{}`)),
			oniontest.Text("done"))
		res, err := newAgent(t, s, d).Run(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if got := res.ToolCalls[2].Output; got != "2" {
			t.Fatalf("run %d: total read %s, want 2: it ran before the writes listed before it", i, got)
		}
		s.Close()
	}
}

// TestReadAfterASlowWrite: a read listed after a write that takes its time
// does not start until the write is done.
func TestReadAfterASlowWrite(t *testing.T) {
	d := &todo{slow: make(chan struct{}), added: make(chan struct{})}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("add", `{"item":"a"}`), oniontest.Call("total", `{}`)),
		oniontest.Text("done"))
	var order []string
	var res *onion.Result
	for e, err := range newAgent(t, s, d).Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case onion.EventToolStarted:
			order = append(order, "start "+e.Call.Name)
			if e.Call.Name == "add" {
				// Let the write finish only once it has started: a read
				// running alongside it would have begun by now and read 0.
				go func() { <-d.added; close(d.slow) }()
			}
		case onion.EventToolFinished:
			order = append(order, "end "+e.Call.Name)
		case onion.EventDone:
			res = e.Result
		}
	}
	if got := strings.Join(order, ", "); got != "start add, end add, start total, end total" {
		t.Errorf("events: %s", got)
	}
	if got := res.ToolCalls[1].Output; got != "1" {
		t.Errorf("total read %s, want 1", got)
	}
}

// TestReadsStartInTheModelsOrder: reads that run together are started in
// the order the model listed them, each handed to its tool before the
// next one is.
func TestReadsStartInTheModelsOrder(t *testing.T) {
	probe, err := onion.NewTool(func(a struct {
		N int `json:"n"`
	}) int {
		return a.N
	}, onion.Name("probe"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	for run := range 100 {
		var calls []oniontest.ToolCall
		for n := range 5 {
			calls = append(calls, oniontest.Call("probe", fmt.Sprintf(`{"n":%d}`, n)))
		}
		s := oniontest.NewServer(t, oniontest.ToolCalls(calls...), oniontest.Text("done"))
		var started []string
		for e, err := range newAgent(t, s, probe).Stream(context.Background(), "go") {
			if err != nil {
				t.Fatal(err)
			}
			if e.Kind == onion.EventToolStarted {
				started = append(started, e.Call.Arguments)
			}
		}
		if got := strings.Join(started, ""); got != `{"n":0}{"n":1}{"n":2}{"n":3}{"n":4}` {
			t.Fatalf("run %d: reads started in the order %s", run, got)
		}
		s.Close()
	}
}

// TestHookFailureLeavesEveryCallAnOutcome: a BeforeTool hook that fails
// on the second of three writes stops the run; the first ran, the second
// and third did not, and each says so.
func TestHookFailureLeavesEveryCallAnOutcome(t *testing.T) {
	l := &ledger{}
	stop := errors.New("stop here")
	var after []string
	hooks := onion.Hooks{
		BeforeTool: func(_ context.Context, e onion.ToolEvent) error {
			if e.Call.Arguments == `{"entry":"b"}` {
				return stop
			}
			return nil
		},
		AfterTool: func(_ context.Context, e onion.ToolEvent) error { after = append(after, e.Call.Arguments); return nil },
	}
	s := oniontest.NewServer(t, appends("a", "b", "c"))
	res, err := newAgent(t, s, l, hooks).Run(context.Background(), "go")
	if !errors.Is(err, stop) || res == nil {
		t.Fatalf("err = %v, result %v", err, res)
	}
	if l.got() != "a" {
		t.Errorf("ledger %q, want a", l.got())
	}
	want := []onion.Outcome{onion.Succeeded, onion.Skipped, onion.Skipped}
	if len(res.ToolCalls) != 3 {
		t.Fatalf("%d calls recorded, want 3", len(res.ToolCalls))
	}
	for i, c := range res.ToolCalls {
		if c.Outcome != want[i] {
			t.Errorf("call %d ended %q, want %s", i, c.Outcome, want[i])
		}
		if i > 0 && (!strings.HasPrefix(c.Output, onion.SkippedPrefix) || !strings.Contains(c.Error, "stop here")) {
			t.Errorf("call %d: output %q, error %q", i, c.Output, c.Error)
		}
	}
	if res.StopReason != onion.StopFailed {
		t.Errorf("stop reason %q", res.StopReason)
	}
	if fmt.Sprint(after) != `[{"entry":"a"}]` {
		t.Errorf("AfterTool saw %v: hooks must stop after one failed", after)
	}
}

// TestDenialsSayWhy: the model reads the same fail-closed denial, while
// ToolCall.Error and the log say why.
func TestDenialsSayWhy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		approver any
		reason   string
	}{
		{"none", nil, "no approver configured"},
		{"error", onion.Approver(func(context.Context, onion.Call) (bool, error) { return false, errors.New("terminal closed") }), "approver failed: terminal closed"},
		{"panic", onion.Approver(func(context.Context, onion.Call) (bool, error) { panic("approver bug") }), "approver failed: it panicked: approver bug"},
		{"no", onion.Approver(func(context.Context, onion.Call) (bool, error) { return false, nil }), "the approver said no"},
		{"goexit", onion.Approver(func(context.Context, onion.Call) (bool, error) { runtime.Goexit(); return true, nil }), "approver failed: it ended its goroutine (runtime.Goexit) without answering"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf strings.Builder
			var mu sync.Mutex
			logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
			items := []any{&ledger{}, onion.Logger(logger)}
			if tc.approver != nil {
				items = append(items, tc.approver)
			}
			s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("refund", `{"amount":5}`)), oniontest.Text("done"))
			res, err := newAgent(t, s, items...).Run(context.Background(), "refund")
			if err != nil {
				t.Fatal(err)
			}
			c := res.ToolCalls[0]
			if c.Outcome != onion.Denied || c.Error != tc.reason {
				t.Errorf("outcome %s, error %q; want denied, %q", c.Outcome, c.Error, tc.reason)
			}
			if msg := toolMessages(t, s, 1)[c.ID]; msg != "the user denied this call, so the tool did not run. Do not call it again unless the user asks for it." {
				t.Errorf("the model read %q", msg)
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(buf.String(), `"outcome":"denied","attempts":0`) || !strings.Contains(buf.String(), `"error":"`+tc.reason+`"`) {
				t.Errorf("the log does not say why:\n%s", buf.String())
			}
		})
	}
}

// TestInvalidArgumentsAreNotRetried: arguments that fail the check go back
// to the model at once, however many retries reads get.
func TestInvalidArgumentsAreNotRetried(t *testing.T) {
	var ran atomic.Int32
	tool, err := onion.NewTool(func(a struct {
		N int `json:"n"`
	}) int {
		ran.Add(1)
		return a.N
	}, onion.Name("count"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("count", `{"n":"three"}`)), oniontest.Text("done"))
	a := newAgent(t, s, tool, onion.ToolRetries(3))
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.ToolCalls[0]; c.Outcome != onion.Failed || c.Attempts != 1 || ran.Load() != 0 || !strings.Contains(c.Output, "invalid arguments") {
		t.Errorf("call %+v; the func ran %d times", c, ran.Load())
	}
}

// TestAfterToolFailureLeavesEveryCallAnOutcome: an AfterTool hook failing
// while two reads run lets the other read finish and skips the write.
func TestAfterToolFailureLeavesEveryCallAnOutcome(t *testing.T) {
	l := &ledger{}
	stop := errors.New("after failed")
	var once sync.Once
	hooks := onion.Hooks{AfterTool: func(context.Context, onion.ToolEvent) error {
		var err error
		once.Do(func() { err = stop })
		return err
	}}
	s := oniontest.NewServer(t, oniontest.ToolCalls(
		oniontest.Call("lookup", `{"key":"a"}`), oniontest.Call("lookup", `{"key":"b"}`), oniontest.Call("append", `{"entry":"x"}`)))
	res, err := newAgent(t, s, Lookup, l, hooks).Run(context.Background(), "go")
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	got := map[string]onion.Outcome{}
	for _, c := range res.ToolCalls {
		got[c.Arguments] = c.Outcome
	}
	if got[`{"key":"a"}`] != onion.Succeeded || got[`{"key":"b"}`] != onion.Succeeded || got[`{"entry":"x"}`] != onion.Skipped || l.got() != "" {
		t.Errorf("outcomes %v, ledger %q", got, l.got())
	}
}

// TestRunCall: the single-call path outside a loop keeps every rule.
func TestRunCall(t *testing.T) {
	ctx := context.Background()
	l := &ledger{}
	tools, err := onion.ToolsFrom(l)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*onion.Tool{}
	for _, tool := range tools {
		byName[tool.Name()] = tool
	}
	refund := onion.Call{ID: "1", Arguments: json.RawMessage(`{"amount":5}`)}
	if c := drive.RunCall(ctx, byName["refund"], refund, drive.CallConfig{}); c.Outcome != onion.Denied || c.Error != "no approver configured" || c.Attempts != 0 || l.got() != "" {
		t.Errorf("no approver: %+v, ledger %q", c, l.got())
	}
	var asked onion.Call
	yes := drive.CallConfig{Approver: func(_ context.Context, c onion.Call) (bool, error) { asked = c; return true, nil }}
	if c := drive.RunCall(ctx, byName["refund"], refund, yes); c.Outcome != onion.Succeeded || l.got() != "refund" || asked.Name != "refund" || asked.Intent != onion.Write {
		t.Errorf("approved: %+v, ledger %q, asked %+v", c, l.got(), asked)
	}
	if c := drive.RunCall(ctx, byName["append"], onion.Call{ID: "2", Arguments: json.RawMessage(`{"entry":7}`)}, drive.CallConfig{}); c.Outcome != onion.Failed || !strings.Contains(c.Output, "invalid arguments") {
		t.Errorf("bad arguments: %+v", c)
	}
	boom, err := onion.NewTool(func(struct{}) error { panic("boom") }, onion.Name("boom"))
	if err != nil {
		t.Fatal(err)
	}
	if c := drive.RunCall(ctx, boom, onion.Call{ID: "3", Arguments: json.RawMessage(`{}`)}, drive.CallConfig{MaxOutput: 80}); c.Outcome != onion.OutcomeUnknown || len(c.Output) > 80 || !strings.Contains(c.Error, "panicked: boom") {
		t.Errorf("panic: %+v", c)
	}
}
