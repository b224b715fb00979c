package loop_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/loop"
)

// The tools of these tests: the name says the intent.
func testLoop(t *testing.T, change func(*loop.Config)) *loop.Loop {
	t.Helper()
	def := func(name string) loop.ToolDef {
		return loop.ToolDef{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)}
	}
	cfg := loop.Config{
		Model: "m",
		Tools: []loop.Tool{
			{Def: def("read"), Intent: loop.Read},
			{Def: def("write"), Intent: loop.Write},
			{Def: def("delete"), Intent: loop.Delete},
			{Def: def("charge"), Intent: loop.Write, Idempotent: true},
			{Def: def("refund"), Intent: loop.Write, Approval: true},
		},
		MaxIterations: 3,
		MaxParallel:   2,
		ToolRetries:   1,
		MaxOutput:     200,
		BackoffMin:    time.Second,
		BackoffMax:    8 * time.Second,
	}
	if change != nil {
		change(&cfg)
	}
	l, err := loop.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var t0 = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

// run is one run under test: its State and a clock that ticks a second
// per input.
type run struct {
	t   *testing.T
	l   *loop.Loop
	st  *loop.State
	now time.Time
}

func start(t *testing.T, l *loop.Loop) (*run, []string) {
	t.Helper()
	st, effects := l.Start("r1", 42, []loop.Message{{Role: loop.RoleUser, Content: "earlier"}, {Role: loop.RoleAssistant, Content: "reply"}}, "go")
	return &run{t: t, l: l, st: st, now: t0}, show(effects)
}

func (r *run) step(in loop.Input) []string {
	r.t.Helper()
	r.now = r.now.Add(time.Second)
	in.Now = r.now
	effects, err := r.l.Step(r.st, in)
	if err != nil {
		r.t.Fatal(err)
	}
	return show(effects)
}

func (r *run) reply(calls ...string) []string {
	r.t.Helper()
	msg := loop.Message{Role: loop.RoleAssistant}
	for i, c := range calls {
		name, args, _ := strings.Cut(c, " ")
		if args == "" {
			args = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, loop.ToolRequest{ID: fmt.Sprint("c", i), Name: name, Arguments: args})
	}
	return r.step(loop.Input{Reply: &loop.Response{ID: "resp", Message: msg, Usage: loop.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}}})
}

func (r *run) text(s string) []string {
	r.t.Helper()
	return r.step(loop.Input{Reply: &loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: s}}})
}

func (r *run) ok(id string) []string {
	r.t.Helper()
	return r.step(loop.Input{Done: &loop.Done{CallID: id, Output: "out " + id}})
}

func (r *run) fail(id string, f loop.Failure) []string {
	r.t.Helper()
	return r.step(loop.Input{Done: &loop.Done{CallID: id, Failure: f, Error: "broke " + id}})
}

func (r *run) call(id string) loop.Call {
	for _, c := range r.st.Calls {
		if c.ID == id {
			return c
		}
	}
	for _, c := range r.st.Result.Calls {
		if c.ID == id {
			return c
		}
	}
	r.t.Fatalf("no call %s", id)
	return loop.Call{}
}

// show writes effects as short lines: what a test compares.
func show(effects []loop.Effect) []string {
	var out []string
	for _, e := range effects {
		switch e.Kind {
		case loop.Emit:
			if e.Event == loop.EventIteration {
				out = append(out, fmt.Sprint("iteration ", e.Iteration))
				continue
			}
			s := string(e.Event) + " " + e.Call.ID
			if e.Call.Outcome != "" {
				s += " " + string(e.Call.Outcome)
			}
			out = append(out, s)
		case loop.AskModel:
			out = append(out, fmt.Sprintf("ask_model %d messages %d tools", len(e.Request.Messages), len(e.Request.Tools)))
		case loop.AskApproval:
			out = append(out, "ask_approval "+e.Call.ID)
		case loop.RunCall:
			s := fmt.Sprintf("run %s#%d", e.Call.ID, e.Call.Attempts)
			if e.Wait > 0 {
				s += " after " + e.Wait.String()
			}
			out = append(out, s)
		case loop.Finish:
			out = append(out, "finish "+string(e.Result.StopReason))
		}
	}
	return out
}

func expect(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("%s:\n got %s\nwant %s", what, strings.Join(got, " | "), strings.Join(want, " | "))
	}
}

func TestStartAsksTheModel(t *testing.T) {
	r, effects := start(t, testLoop(t, nil))
	expect(t, "start", effects, "iteration 1", "ask_model 4 messages 5 tools")
	req := r.l.Pending(r.st)[0].Request
	if req.Messages[0].Role != loop.RoleSystem || !strings.HasSuffix(req.Messages[0].Content, loop.SafetyNote) || req.Messages[3].Content != "go" {
		t.Errorf("request messages %+v", req.Messages)
	}
}

// TestOrder: calls run in the model's order, consecutive reads together:
// a read waits for the writes before it, a write for every call before it.
func TestOrder(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	expect(t, "reply", r.reply("write", "read", "read", "delete", "read"),
		"tool_started c0", "run c0#1")
	expect(t, "first write done", r.ok("c0"),
		"tool_finished c0 succeeded", "tool_started c1", "run c1#1", "tool_started c2", "run c2#1")
	expect(t, "second read done first", r.ok("c2"), "tool_finished c2 succeeded")
	expect(t, "first read done", r.ok("c1"), "tool_finished c1 succeeded", "tool_started c3", "run c3#1")
	expect(t, "delete done", r.ok("c3"), "tool_finished c3 succeeded", "tool_started c4", "run c4#1")
	expect(t, "last read done", r.ok("c4"), "tool_finished c4 succeeded", "iteration 2", "ask_model 10 messages 5 tools")
	// The tool messages follow the assistant message in the model's order.
	var ids []string
	for _, m := range r.st.Messages[4:] {
		ids = append(ids, m.ToolCallID)
	}
	if got := strings.Join(ids, ","); got != "c0,c1,c2,c3,c4" {
		t.Errorf("tool messages answer %s", got)
	}
}

// TestParallelBound: at most MaxParallel reads run at once, started in the
// model's order as slots free up.
func TestParallelBound(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	expect(t, "reply", r.reply("read", "read", "read", "read"),
		"tool_started c0", "run c0#1", "tool_started c1", "run c1#1")
	expect(t, "c1 done", r.ok("c1"), "tool_finished c1 succeeded", "tool_started c2", "run c2#1")
	expect(t, "c0 done", r.ok("c0"), "tool_finished c0 succeeded", "tool_started c3", "run c3#1")
	r.ok("c2")
	expect(t, "all done", r.ok("c3"), "tool_finished c3 succeeded", "iteration 2", "ask_model 9 messages 5 tools")
}

// TestLaterWritesSkipped: after a write that failed, was denied or ended
// with an unknown outcome, the later writes of the response are skipped;
// reads still run.
func TestLaterWritesSkipped(t *testing.T) {
	for _, tc := range []struct {
		name    string
		end     func(r *run) []string
		outcome loop.Outcome
	}{
		{"failed", func(r *run) []string { return r.fail("c0", loop.ToolFailed) }, loop.Failed},
		{"bad arguments", func(r *run) []string { return r.fail("c0", loop.BadArguments) }, loop.Failed},
		{"outcome unknown", func(r *run) []string { return r.fail("c0", loop.Cut) }, loop.OutcomeUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := start(t, testLoop(t, nil))
			r.reply("write", "read", "delete", "write")
			expect(t, "first write ends", tc.end(r),
				"tool_finished c0 "+string(tc.outcome), "tool_started c1", "run c1#1", "tool_finished c2 skipped", "tool_finished c3 skipped")
			skip := r.call("c2")
			if !strings.HasPrefix(skip.Output, loop.SkippedPrefix) || !strings.Contains(skip.Output, "write (id c0) in this response ended "+string(tc.outcome)) {
				t.Errorf("skip text %q", skip.Output)
			}
			expect(t, "read done", r.ok("c1"), "tool_finished c1 succeeded", "iteration 2", "ask_model 9 messages 5 tools")
		})
	}
	t.Run("denied", func(t *testing.T) {
		r, _ := start(t, testLoop(t, nil))
		expect(t, "reply", r.reply("refund", "write"), "tool_started c0", "ask_approval c0")
		expect(t, "denied", r.step(loop.Input{Approval: &loop.Approval{CallID: "c0", Reason: "the approver said no"}}),
			"tool_finished c0 denied", "tool_finished c1 skipped", "iteration 2", "ask_model 7 messages 5 tools")
		if c := r.call("c0"); c.Output != loop.DeniedText || c.Error != "the approver said no" || c.Attempts != 0 {
			t.Errorf("denied call %+v", c)
		}
	})
}

func TestApprovalGranted(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	r.reply("refund")
	expect(t, "granted", r.step(loop.Input{Approval: &loop.Approval{CallID: "c0", Granted: true}}), "run c0#1")
	r.ok("c0")
	if c := r.call("c0"); c.Outcome != loop.Succeeded || c.Duration != 2*time.Second || c.ApprovalWait != time.Second {
		t.Errorf("call %+v: the duration counts the approval, and ApprovalWait is its part", c)
	}
}

func TestUnknownTool(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	huge := strings.Repeat("n", 768<<10)
	expect(t, "reply", r.reply("nope", huge, "read"),
		"tool_finished c0 failed", "tool_finished c1 failed", "tool_started c2", "run c2#1")
	c := r.call("c0")
	want := "error: unknown tool \"nope\":\n- no tool has that name; call one of the tools listed below\ntools: read, write, delete, charge, refund"
	if c.Output != want || c.Error != "unknown tool" {
		t.Errorf("unknown tool: %q, error %q", c.Output, c.Error)
	}
	if out := r.call("c1").Output; len(out) > 200 || !strings.Contains(out, "(786432 bytes)") {
		t.Errorf("a 768 KiB name made a %d-byte message: %.120q", len(out), out)
	}
}

// TestRetries: a failed read is tried again after a backoff drawn from the
// seed; arguments that did not fit never are; a plain write never is.
func TestRetries(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	r.reply("read", "read")
	got := r.fail("c0", loop.ToolFailed)
	if len(got) != 1 || !strings.HasPrefix(got[0], "run c0#2 after ") {
		t.Fatalf("retry: %v", got)
	}
	expect(t, "second attempt fails too", r.fail("c0", loop.ToolFailed), "tool_finished c0 failed")
	if c := r.call("c0"); c.Attempts != 2 || c.Output != "error: broke c0" {
		t.Errorf("call %+v", c)
	}
	expect(t, "bad arguments", r.fail("c1", loop.BadArguments), "tool_finished c1 failed", "iteration 2", "ask_model 7 messages 5 tools")

	r.reply("write", "charge")
	expect(t, "plain write", r.fail("c0", loop.ToolFailed), "tool_finished c0 failed", "tool_finished c1 skipped", "iteration 3", "ask_model 10 messages 5 tools")
	r.reply("charge")
	if got := r.fail("c0", loop.Cut); len(got) != 1 || !strings.HasPrefix(got[0], "run c0#2 after ") {
		t.Errorf("an idempotent write is retried: %v", got)
	}
}

func TestBackoffIsSeededAndBounded(t *testing.T) {
	waits := func(seed uint64) []string {
		l := testLoop(t, func(c *loop.Config) { c.ToolRetries = 5 })
		st, _ := l.Start("r", seed, nil, "go")
		now := t0
		step := func(in loop.Input) []loop.Effect {
			now = now.Add(time.Second)
			in.Now = now
			e, err := l.Step(st, in)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		step(loop.Input{Reply: &loop.Response{Message: loop.Message{ToolCalls: []loop.ToolRequest{{ID: "a", Name: "read"}}}}})
		var out []string
		for n := range 5 {
			e := step(loop.Input{Done: &loop.Done{CallID: "a", Failure: loop.ToolFailed, Error: "x"}})
			d := e[0].Wait
			hi := min(time.Second<<n, 8*time.Second)
			if d < hi/2 || d > hi {
				t.Errorf("retry %d waits %v, want between %v and %v", n, d, hi/2, hi)
			}
			out = append(out, d.String())
		}
		return out
	}
	a, b, c := waits(1), waits(1), waits(2)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("the same seed gave %v and %v", a, b)
	}
	if strings.Join(a, ",") == strings.Join(c, ",") {
		t.Errorf("seeds 1 and 2 gave the same jitter %v", a)
	}
}

func TestCutCalls(t *testing.T) {
	r, _ := start(t, testLoop(t, func(c *loop.Config) { c.ToolRetries = 0 }))
	r.reply("read", "write")
	r.fail("c0", loop.Cut)
	if c := r.call("c0"); c.Outcome != loop.Failed || c.Output != "error: the tool was cut off: broke c0" {
		t.Errorf("a cut read: %+v", c)
	}
	r.fail("c1", loop.Cut)
	if c := r.call("c1"); c.Outcome != loop.OutcomeUnknown || !strings.Contains(c.Output, "nobody knows whether it took effect") || c.Error != "the tool was cut off: broke c1" {
		t.Errorf("a cut write: %+v", c)
	}
}

// TestCap: after MaxIterations rounds the model is asked without tools,
// with the cap's note last; an empty answer gets a fallback.
func TestCap(t *testing.T) {
	r, _ := start(t, testLoop(t, func(c *loop.Config) { c.MaxIterations = 1 }))
	r.reply("write")
	expect(t, "after the cap", r.ok("c0"), "tool_finished c0 succeeded", "iteration 2", "ask_model 6 messages 0 tools")
	// The note ends the last tool result: a user message after tool
	// results is more than strict chat templates take.
	req := r.l.Pending(r.st)[0].Request
	if last := req.Messages[len(req.Messages)-1]; last.Role != loop.RoleTool || !strings.HasSuffix(last.Content, "\n\n"+loop.CapNote) {
		t.Errorf("last message %+v", last)
	}
	expect(t, "answer", r.reply("write"), "finish max_iterations")
	res := r.st.Result
	if res.Iterations != 1 || !strings.Contains(res.Output, "could not finish within 1 rounds") || len(res.Calls) != 1 {
		t.Errorf("result %+v", res)
	}
	if last := r.st.Messages[len(r.st.Messages)-1]; len(last.ToolCalls) != 0 {
		t.Errorf("tool calls after the cap were kept: %+v", last)
	}
}

func TestNaturalEnd(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	expect(t, "answer", r.text("hello"), "finish natural")
	if res := r.st.Result; res.Output != "hello" || res.Usage.Requests != 1 || res.Iterations != 0 {
		t.Errorf("result %+v", res)
	}
}

// TestStop: a stop skips the calls not started; those in flight are
// answered, then the run finishes.
func TestStop(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	r.reply("read", "read", "read", "write")
	expect(t, "stop", r.step(loop.Input{Stop: &loop.Stop{Reason: loop.StopFailed, Error: "hook failed"}}),
		"tool_finished c2 skipped", "tool_finished c3 skipped")
	expect(t, "a running call ends", r.fail("c0", loop.ToolFailed), "tool_finished c0 failed")
	expect(t, "a call the runtime did not start", r.step(loop.Input{Done: &loop.Done{CallID: "c1", Failure: loop.NotRun}}), "tool_finished c1 skipped", "finish failed")
	if c := r.call("c1"); c.Error != "the run stopped: hook failed" || !strings.HasPrefix(c.Output, loop.SkippedPrefix) {
		t.Errorf("call %+v", c)
	}
	if res := r.st.Result; res.Error != "hook failed" || len(res.Calls) != 4 {
		t.Errorf("result %+v", res)
	}

	r, _ = start(t, testLoop(t, nil))
	expect(t, "stop while the model answers", r.step(loop.Input{Stop: &loop.Stop{Reason: loop.StopCanceled}}), "finish canceled")
}

func TestMissingCallIDs(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	r.step(loop.Input{Reply: &loop.Response{Message: loop.Message{ToolCalls: []loop.ToolRequest{{Name: "read"}, {Name: "read"}}}}})
	if a, b := r.st.Calls[0].ID, r.st.Calls[1].ID; a != "call_r1_1_0" || b != "call_r1_1_1" {
		t.Errorf("ids %s, %s", a, b)
	}
}

// TestUnusableCallIDs: a model's ID that is too long or not printable
// ASCII never becomes a call's ID (in the calls, the kept reply, the tool
// messages): the loop gives the call its own.
func TestUnusableCallIDs(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	long := strings.Repeat("x", loop.MaxCallID+1)
	r.step(loop.Input{Reply: &loop.Response{Message: loop.Message{ToolCalls: []loop.ToolRequest{
		{ID: long, Name: "read"}, {ID: "call\n1", Name: "read"}, {ID: "ok_1", Name: "read"}, {ID: strings.Repeat("y", loop.MaxCallID), Name: "read"}}}}})
	want := []string{"call_r1_1_0", "call_r1_1_1", "ok_1", strings.Repeat("y", loop.MaxCallID)}
	for i, c := range r.st.Calls {
		if c.ID != want[i] || r.st.Messages[len(r.st.Messages)-1].ToolCalls[i].ID != want[i] {
			t.Errorf("call %d has the ID %.40q, want %.40q", i, c.ID, want[i])
		}
	}
}

func TestUnexpectedInputs(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	for _, in := range []loop.Input{
		{},
		{Done: &loop.Done{CallID: "c0"}},
		{Approval: &loop.Approval{CallID: "c0"}},
		{Reply: &loop.Response{}, Stop: &loop.Stop{}},
	} {
		if _, err := r.l.Step(r.st, in); !errors.Is(err, loop.ErrUnexpected) {
			t.Errorf("input %+v: err %v", in, err)
		}
	}
	r.reply("read")
	if _, err := r.l.Step(r.st, loop.Input{Reply: &loop.Response{}}); !errors.Is(err, loop.ErrUnexpected) {
		t.Errorf("a second reply: err %v", err)
	}
}

// script is a conversation: the same inputs, in the same order, for a
// replay. Each input is a func of the effects so far, as a runtime's
// answers depend on what it was asked.
func script() []loop.Input {
	reply := func(calls ...loop.ToolRequest) loop.Input {
		return loop.Input{Reply: &loop.Response{ID: "x", Message: loop.Message{Content: "thinking", ToolCalls: calls}, Usage: loop.Usage{PromptTokens: 5, CompletionTokens: 1, TotalTokens: 6}}}
	}
	done := func(id string, f loop.Failure) loop.Input {
		return loop.Input{Done: &loop.Done{CallID: id, Output: "ok", Failure: f, Error: map[bool]string{true: "no"}[f != ""]}}
	}
	in := []loop.Input{
		reply(loop.ToolRequest{ID: "a", Name: "read"}, loop.ToolRequest{ID: "b", Name: "refund", Arguments: `{"n":1}`},
			loop.ToolRequest{ID: "c", Name: "read"}, loop.ToolRequest{ID: "d", Name: "nope"}, loop.ToolRequest{ID: "e", Name: "write"}),
		done("a", loop.ToolFailed), // retried
		done("a", ""),
		{Approval: &loop.Approval{CallID: "b", Granted: true}},
		done("b", loop.Cut), // outcome unknown: e is skipped
		done("c", ""),
		reply(loop.ToolRequest{Name: "charge"}),
		done("call_r1_2_0", ""),
		{Reply: &loop.Response{Message: loop.Message{Content: "the answer"}}},
	}
	for i := range in {
		in[i].Now = t0.Add(time.Duration(i) * time.Second)
	}
	return in
}

// replay runs the script on a fresh State, and with checkpoint re-decodes
// the State from JSON before every step, as a durable runtime resuming
// would; it returns every effect as JSON.
func replay(t *testing.T, l *loop.Loop, checkpoint bool) []byte {
	t.Helper()
	st, effects := l.Start("r1", 7, nil, "go")
	var all bytes.Buffer
	enc := json.NewEncoder(&all)
	if err := enc.Encode(effects); err != nil {
		t.Fatal(err)
	}
	for _, in := range script() {
		if checkpoint {
			b, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			st = new(loop.State)
			if err := json.Unmarshal(b, st); err != nil {
				t.Fatal(err)
			}
		}
		effects, err := l.Step(st, in)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(effects); err != nil {
			t.Fatal(err)
		}
	}
	if st.Phase != loop.Finished {
		t.Fatalf("the script left the run in phase %s", st.Phase)
	}
	return all.Bytes()
}

// TestReplay: the same inputs give the same effects, byte for byte, and a
// State decoded from JSON at any point goes on exactly as the original.
func TestReplay(t *testing.T) {
	l := testLoop(t, nil)
	first, second, resumed := replay(t, l, false), replay(t, l, false), replay(t, l, true)
	if !bytes.Equal(first, second) {
		t.Errorf("two runs of the same inputs differ:\n%s\n%s", first, second)
	}
	if !bytes.Equal(first, resumed) {
		t.Errorf("a run resumed from JSON at every step differs:\n%s\n%s", first, resumed)
	}
	for _, want := range []string{`"kind":"ask_approval"`, `"outcome":"outcome_unknown"`, `"outcome":"skipped"`, `"wait":`, `"stop_reason":"natural"`} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("the script never produced %s", want)
		}
	}
}

// TestPending: the effects a resumed run carries out again.
func TestPending(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	r.reply("read", "refund")
	var got []string
	for _, e := range r.l.Pending(r.st) {
		got = append(got, string(e.Kind)+" "+e.Call.ID)
	}
	expect(t, "pending", got, "run_call c0")
	r.ok("c0")
	got = got[:0]
	for _, e := range r.l.Pending(r.st) {
		got = append(got, string(e.Kind)+" "+e.Call.ID)
	}
	expect(t, "pending", got, "ask_approval c1")
}

func TestCap64KiBByDefault(t *testing.T) {
	l, err := loop.New(loop.Config{Tools: []loop.Tool{{Def: loop.ToolDef{Name: "read"}, Intent: loop.Read}}})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := l.Start("r", 0, nil, "go")
	if _, err := l.Step(st, loop.Input{Reply: &loop.Response{Message: loop.Message{ToolCalls: []loop.ToolRequest{{ID: "a", Name: "read"}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Step(st, loop.Input{Done: &loop.Done{CallID: "a", Output: strings.Repeat("é", 40<<10)}}); err != nil {
		t.Fatal(err)
	}
	if out := st.Messages[len(st.Messages)-1].Content; len(out) > 64<<10 || !strings.HasSuffix(out, "bytes not shown]") {
		t.Errorf("a %d-byte output was sent as %d bytes", 80<<10, len(out))
	}
}

func TestDuplicateCallIDs(t *testing.T) {
	r, _ := start(t, testLoop(t, nil))
	r.step(loop.Input{Reply: &loop.Response{Message: loop.Message{ToolCalls: []loop.ToolRequest{{ID: "x", Name: "nope"}, {ID: "x", Name: "read"}, {ID: "x", Name: "read"}}}}})
	if a, b, c := r.st.Calls[0].ID, r.st.Calls[1].ID, r.st.Calls[2].ID; a != "x" || b != "call_r1_1_1" || c != "call_r1_1_2" {
		t.Errorf("ids %s, %s, %s", a, b, c)
	}
}
