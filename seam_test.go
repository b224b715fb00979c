package onion_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// runSync is a second runtime for an agent's loop: synchronous, one effect
// at a time, no goroutines, no retries, no hooks. It is all another runtime
// needs: the loop, the agent's model, tools and single-call settings.
func runSync(ctx context.Context, t *testing.T, a *onion.Agent, runID, prompt string) *onion.Result {
	l, model, cfg := drive.Loop(a), a.LanguageModel(), drive.CallConfigOf(a)
	st, effects := l.Start(runID, 1, nil, prompt)
	for len(effects) > 0 {
		e := effects[0]
		effects = effects[1:]
		var in loop.Input
		switch e.Kind {
		case loop.Finish:
			return drive.ResultOf(*e.Result)
		case loop.AskModel:
			resp, err := model.Generate(ctx, e.Request, nil)
			if err != nil {
				t.Fatal(err)
			}
			in.Reply = resp
		case loop.AskApproval:
			tool, _ := a.Tools().Get(e.Call.Name)
			ok, reason := cfg.Approve(ctx, tool, drive.CallOf(runID, e.Call))
			in.Approval = &loop.Approval{CallID: e.Call.ID, Granted: ok, Reason: reason}
		case loop.RunCall:
			tool, _ := a.Tools().Get(e.Call.Name)
			d := cfg.Attempt(ctx, tool, drive.CallOf(runID, e.Call), e.Call.Arguments)
			in.Done = &d
		default:
			continue
		}
		more, err := l.Step(st, in)
		if err != nil {
			t.Fatal(err)
		}
		effects = append(effects, more...)
	}
	t.Fatal("the loop ended without finishing")
	return nil
}

// TestSecondRuntime drives the same scripted conversation through the live
// Agent and through runSync: the model sees the same requests and the runs
// end with the same results.
func TestSecondRuntime(t *testing.T) {
	steps := func() []oniontest.Step {
		return []oniontest.Step{
			oniontest.ToolCalls(
				oniontest.Call("lookup", `{"key":"a"}`), oniontest.Call("lookup", `{"key":"fail"}`),
				oniontest.Call("append", `{"entry":"x"}`), oniontest.Call("refund", `{"amount":5}`),
				oniontest.Call("nope", `{}`), oniontest.Call("lookup", `{"key": 7}`), oniontest.Call("append", `{"entry":"y"}`)),
			oniontest.ToolCalls(oniontest.Call("append", `{"entry":"no"}`), oniontest.Call("lookup", `{"key":"b"}`)),
			oniontest.Text("all done"),
		}
	}
	deny := onion.Approver(func(context.Context, onion.Call) (bool, error) { return false, nil })
	run := func(live bool) (*onion.Result, []oniontest.Request, string) {
		l := &ledger{fail: "no"}
		s := oniontest.NewServer(t, steps()...)
		a := newAgent(t, s, Lookup, l, deny, onion.ToolRetries(1))
		var res *onion.Result
		if live {
			var err error
			if res, err = a.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
		} else {
			res = runSync(context.Background(), t, a, "sync", "go")
		}
		res.RunID = ""
		for i := range res.ToolCalls {
			res.ToolCalls[i].Duration, res.ToolCalls[i].ApprovalWait = 0, 0
		}
		return res, s.Requests(), l.got()
	}
	liveRes, liveReqs, liveLedger := run(true)
	syncRes, syncReqs, syncLedger := run(false)
	if !reflect.DeepEqual(liveRes, syncRes) {
		a, _ := json.MarshalIndent(liveRes, "", "  ")
		b, _ := json.MarshalIndent(syncRes, "", "  ")
		t.Errorf("results differ:\nlive %s\nsync %s", a, b)
	}
	if len(liveReqs) != 3 || len(syncReqs) != 3 {
		t.Fatalf("%d and %d requests, want 3", len(liveReqs), len(syncReqs))
	}
	for i := range liveReqs {
		if string(liveReqs[i].Raw) != string(syncReqs[i].Raw) {
			t.Errorf("request %d differs:\nlive %s\nsync %s", i, liveReqs[i].Raw, syncReqs[i].Raw)
		}
	}
	if liveLedger != "x" || syncLedger != liveLedger {
		t.Errorf("ledgers %q and %q", liveLedger, syncLedger)
	}
	if liveRes.Output != "all done" || len(liveRes.ToolCalls) != 9 {
		t.Errorf("result %+v", liveRes)
	}
}
