package loop_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

var testFormat = loop.Format{Name: "report", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}

func startWithFormat(t *testing.T, l *loop.Loop) (*run, []loop.Effect) {
	t.Helper()
	st, effects := l.StartWithFormat("r1", 42, nil, "go", testFormat)
	return &run{t: t, l: l, st: st, now: t0}, effects
}

// only returns the one effect of kind k among effects.
func only(t *testing.T, effects []loop.Effect, k loop.EffectKind) loop.Effect {
	t.Helper()
	var found []loop.Effect
	for _, e := range effects {
		if e.Kind == k {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d effects of kind %s in %s", len(found), k, show(effects))
	}
	return found[0]
}

func (r *run) input(in loop.Input) []loop.Effect {
	r.t.Helper()
	effects, err := r.l.Step(r.st, in)
	if err != nil {
		r.t.Fatal(err)
	}
	return effects
}

func TestFormatOnEveryRequest(t *testing.T) {
	r, effects := startWithFormat(t, testLoop(t, func(c *loop.Config) { c.MaxIterations = 1 }))
	if req := only(t, effects, loop.AskModel).Request; req.Format == nil || req.Format.Name != "report" || !req.Format.Strict || len(req.Tools) == 0 {
		t.Fatalf("first request %+v", req)
	}
	r.reply("read")
	effects = r.input(loop.Input{Done: &loop.Done{CallID: "c0", Output: "x"}})
	if req := only(t, effects, loop.AskModel).Request; req.Format == nil || len(req.Tools) != 0 {
		t.Errorf("the request after the cap: format %v, %d tools; want the format and no tools", req.Format, len(req.Tools))
	}
	if plain, _ := testLoop(t, nil).Start("r", 1, nil, "go"); plain.Answer != nil {
		t.Error("Start made a run with a Format")
	}
}

func TestAnswerChecked(t *testing.T) {
	r, _ := startWithFormat(t, testLoop(t, nil))
	effects := r.input(loop.Input{Reply: &loop.Response{Message: loop.Message{Content: `{"ok":true}`}}})
	if len(effects) != 1 || effects[0].Kind != loop.CheckAnswer || effects[0].Answer != `{"ok":true}` {
		t.Fatalf("effects %+v, want one CheckAnswer of the answer", effects)
	}
	if r.st.Phase != loop.AwaitingCheck {
		t.Errorf("phase %s", r.st.Phase)
	}
	fin := only(t, r.input(loop.Input{Checked: &loop.Checked{}}), loop.Finish)
	if fin.Result.StopReason != loop.StopNatural || fin.Result.Output != `{"ok":true}` || fin.Result.AnswerProblems != nil {
		t.Errorf("result %+v", fin.Result)
	}
}

func TestAnswerCorrectedOnce(t *testing.T) {
	r, _ := startWithFormat(t, testLoop(t, nil))
	r.input(loop.Input{Reply: &loop.Response{Message: loop.Message{Content: `{}`}}})
	effects := r.input(loop.Input{Checked: &loop.Checked{Problems: []string{"missing field a", "missing field b"}}})
	req := only(t, effects, loop.AskModel).Request
	last := req.Messages[len(req.Messages)-1]
	if last.Role != loop.RoleUser || last.Content != loop.CorrectionText([]string{"missing field a", "missing field b"}) ||
		!strings.Contains(last.Content, "- missing field a\n- missing field b") {
		t.Errorf("corrective turn %+v", last)
	}
	if prev := req.Messages[len(req.Messages)-2]; prev.Role != loop.RoleAssistant || prev.Content != `{}` || req.Format == nil {
		t.Errorf("the corrective request: %+v, format %v", prev, req.Format)
	}
	only(t, r.input(loop.Input{Reply: &loop.Response{Message: loop.Message{Content: `[]`}}}), loop.CheckAnswer)
	fin := only(t, r.input(loop.Input{Checked: &loop.Checked{Problems: []string{"want an object"}}}), loop.Finish)
	if res := fin.Result; res.Output != `[]` || len(res.AnswerProblems) != 1 || res.AnswerProblems[0] != "want an object" || res.StopReason != loop.StopNatural {
		t.Errorf("result %+v, want the problems of the second answer and no third request", res)
	}
}

func TestAnswerCheckPendingStopAndUnexpected(t *testing.T) {
	r, _ := startWithFormat(t, testLoop(t, nil))
	if _, err := r.l.Step(r.st, loop.Input{Checked: &loop.Checked{}}); !errors.Is(err, loop.ErrUnexpected) {
		t.Errorf("a check nobody asked for: err %v", err)
	}
	r.input(loop.Input{Reply: &loop.Response{Message: loop.Message{Content: `{}`}}})
	b, err := json.Marshal(r.st)
	if err != nil {
		t.Fatal(err)
	}
	var st loop.State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if p := r.l.Pending(&st); len(p) != 1 || p[0].Kind != loop.CheckAnswer || p[0].Answer != `{}` {
		t.Errorf("pending after a JSON round trip: %+v", p)
	}
	fin := only(t, r.input(loop.Input{Stop: &loop.Stop{Reason: loop.StopCanceled}}), loop.Finish)
	if fin.Result.StopReason != loop.StopCanceled {
		t.Errorf("result %+v", fin.Result)
	}
}

// TestAnswerAndBudgetReplay: a run with a Format and a budget, resumed
// from JSON before every step, goes on exactly as the original.
func TestAnswerAndBudgetReplay(t *testing.T) {
	l := testLoop(t, func(c *loop.Config) { c.TokenBudget = 100 })
	inputs := []loop.Input{
		{Reply: &loop.Response{Message: loop.Message{ToolCalls: []loop.ToolRequest{{ID: "a", Name: "read"}}}, Usage: loop.Usage{PromptTokens: 20, CompletionTokens: 5, TotalTokens: 25}}},
		{Done: &loop.Done{CallID: "a", Output: strings.Repeat("x", 40)}},
		{Reply: &loop.Response{Message: loop.Message{Content: `{}`}, Usage: loop.Usage{PromptTokens: 40, CompletionTokens: 2, TotalTokens: 42}}},
		{Checked: &loop.Checked{Problems: []string{"bad"}}},
	}
	play := func(checkpoint bool) []byte {
		st, effects := l.StartWithFormat("r1", 7, nil, "go", testFormat)
		var all bytes.Buffer
		enc := json.NewEncoder(&all)
		_ = enc.Encode(effects)
		for i, in := range inputs {
			if checkpoint {
				b, _ := json.Marshal(st)
				st = new(loop.State)
				if err := json.Unmarshal(b, st); err != nil {
					t.Fatal(err)
				}
			}
			in.Now = t0
			effects, err := l.Step(st, in)
			if err != nil {
				t.Fatalf("input %d: %v", i, err)
			}
			_ = enc.Encode(effects)
		}
		if st.Phase != loop.Finished {
			t.Fatalf("phase %s", st.Phase)
		}
		return all.Bytes()
	}
	first, resumed := play(false), play(true)
	if !bytes.Equal(first, resumed) {
		t.Errorf("a run resumed from JSON differs:\n%s\n%s", first, resumed)
	}
	// 25 tokens, then a round estimated at 20+5+10+5 = 40: another round
	// and a final request (90) would not fit the 75 left, the final alone
	// does. Then 67 spent: the corrective turn (~40+2+2+2) would not fit.
	for _, want := range []string{`\n\nThe token budget leaves no room`, `did not get.\n\nToken budget: 75 of 100 tokens left.","tool_call_id":"a"`, `"content":"go\n\nToken budget: 100 of 100 tokens left."}`, `"stop_reason":"budget"`, `"answer_problems":["bad"]`, `"output":"{}"`} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("the run never produced %s:\n%s", want, first)
		}
	}
}

// TestCorrectionAtTheCap: the cap's note ends the corrective turn, as two
// user messages in a row are more than some chat templates take.
func TestCorrectionAtTheCap(t *testing.T) {
	r, _ := startWithFormat(t, testLoop(t, func(c *loop.Config) { c.MaxIterations = 1 }))
	r.reply("read")
	r.input(loop.Input{Done: &loop.Done{CallID: "c0", Output: "x"}})
	r.input(loop.Input{Reply: &loop.Response{Message: loop.Message{Content: `{}`}}})
	req := only(t, r.input(loop.Input{Checked: &loop.Checked{Problems: []string{"p"}}}), loop.AskModel).Request
	last := req.Messages[len(req.Messages)-1]
	if last.Content != loop.CorrectionText([]string{"p"})+"\n\n"+loop.CapNote || req.Messages[len(req.Messages)-2].Role != loop.RoleAssistant || len(req.Tools) != 0 {
		t.Errorf("the corrective request after the cap ends with %+v after %+v", last, req.Messages[len(req.Messages)-2])
	}
}
