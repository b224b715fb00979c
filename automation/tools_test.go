package automation_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/automation"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/oniontest"
)

const weekly = `{"input":"Check the sales report and tell me what changed","cron":"0 9 * * MON","time_zone":"Europe/Paris"}`

// approvals records the calls an approver was asked about and answers yes
// or no.
type approvals struct {
	yes   bool
	mu    sync.Mutex // guards asked
	asked []string
}

func (ap *approvals) approve(_ context.Context, c onion.Call) (bool, error) {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	ap.asked = append(ap.asked, c.Name)
	return ap.yes, nil
}

// agentWith returns a Local (in memory) and an agent "assistant" with the
// automation tools over it, against s; the Local fires that agent.
func agentWith(t *testing.T, s *oniontest.Server, ap *approvals, limits automation.Limits) (*automation.Local, *onion.Agent) {
	t.Helper()
	l, err := automation.NewLocal("", automation.Options{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tools, err := automation.Tools(l, "assistant")
	if err != nil {
		t.Fatal(err)
	}
	agent, err := onion.NewAgent("assistant", tools, onion.BaseURL(s.URL()), onion.APIKey("test"), onion.Approver(ap.approve))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(agent); err != nil {
		t.Fatal(err)
	}
	return l, agent
}

// toolResult is what the model was told of the only call it made.
func toolResult(t *testing.T, s *oniontest.Server) string {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests, want the tool result sent back", len(reqs))
	}
	results := reqs[1].ToolResults()
	if len(results) != 1 {
		t.Fatalf("tool results %+v, want 1", results)
	}
	return results[0].Content
}

// TestStartApproved: the model asks to schedule, the approver is asked,
// and the automation exists with the schedule and three next runs shown to
// the model.
func TestStartApproved(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("start_automation", weekly)),
		oniontest.Text("Every Monday at 9:00 I will check the sales report."))
	ap := &approvals{yes: true}
	l, agent := agentWith(t, s, ap, automation.Limits{})
	res, err := agent.Run(context.Background(), "Every Monday at 9, check the sales report and tell me what changed.")
	if err != nil {
		t.Fatal(err)
	}
	if len(ap.asked) != 1 || ap.asked[0] != "start_automation" {
		t.Errorf("approver asked about %v, want start_automation once", ap.asked)
	}
	as := list(t, l)
	if len(as) != 1 || as[0].Agent != "assistant" || as[0].Schedule.Cron != "0 9 * * MON" || as[0].Schedule.TimeZone != "Europe/Paris" || !strings.HasPrefix(as[0].Input, "Check the sales report") {
		t.Fatalf("automations %+v; want the weekly one", as)
	}
	if as[0].IdempotencyKey == "" || as[0].IdempotencyKey != res.RunID+":"+res.ToolCalls[0].ID {
		t.Errorf("idempotency key %q, want the call's (%s:%s)", as[0].IdempotencyKey, res.RunID, res.ToolCalls[0].ID)
	}
	var got struct {
		ID       string              `json:"id"`
		Schedule automation.Schedule `json:"schedule"`
		NextRuns []string            `json:"next_runs"`
	}
	text := toolResult(t, s)
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("tool result %s: %v", text, err)
	}
	if got.ID != as[0].ID || got.Schedule.Cron != "0 9 * * MON" || len(got.NextRuns) != 3 {
		t.Fatalf("tool result %s; want the id, the schedule and three next runs", text)
	}
	for _, r := range got.NextRuns {
		if !strings.Contains(r, "T09:00:00+01:00 (Monday)") {
			t.Errorf("next run %q is not a Monday at 9:00 in Paris in winter", r)
		}
	}
}

// TestStartDenied: the user says no, and no automation exists.
func TestStartDenied(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("start_automation", weekly)),
		oniontest.Text("I did not schedule it."))
	ap := &approvals{yes: false}
	l, agent := agentWith(t, s, ap, automation.Limits{})
	res, err := agent.Run(context.Background(), "Every Monday at 9, check the sales report.")
	if err != nil {
		t.Fatal(err)
	}
	if len(ap.asked) != 1 {
		t.Errorf("approver asked %v, want once", ap.asked)
	}
	if as := list(t, l); len(as) != 0 {
		t.Errorf("a denied call made %+v", as)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Denied {
		t.Errorf("calls %+v, want one denied", res.ToolCalls)
	}
}

// TestRefusalReachesModel: a schedule over the limits comes back to the
// model as a sentence it can act on, and nothing is made.
func TestRefusalReachesModel(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("start_automation", `{"input":"ping the server","cron":"* * * * *","time_zone":"UTC"}`)),
		oniontest.Text("That is too often."))
	l, agent := agentWith(t, s, &approvals{yes: true}, automation.Limits{MinInterval: 15 * time.Minute})
	if _, err := agent.Run(context.Background(), "Ping the server every minute from now on."); err != nil {
		t.Fatal(err)
	}
	if text := toolResult(t, s); !strings.Contains(text, "runs may be no closer than 15m0s: choose a schedule that fires less often") {
		t.Errorf("the model read %q", text)
	}
	if as := list(t, l); len(as) != 0 {
		t.Errorf("made %+v", as)
	}
}

// TestListAndCancelTools lists then cancels through the loop, and an
// unknown id is a sentence.
func TestListAndCancelTools(t *testing.T) {
	s := oniontest.NewServer(t)
	l, agent := agentWith(t, s, &approvals{yes: true}, automation.Limits{})
	a, err := l.Create(context.Background(), automation.Automation{Agent: "assistant", Input: "water the plants",
		Schedule: automation.Schedule{Cron: "0 8 * * *", TimeZone: "Europe/Paris", MaxRuns: 2}})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(
		oniontest.ToolCalls(oniontest.Call("list_automations", `{}`)),
		oniontest.ToolCalls(oniontest.Call("cancel_automation", `{"id":"`+a.ID+`"}`)),
		oniontest.ToolCalls(oniontest.Call("cancel_automation", `{"id":"auto_nope"}`)),
		oniontest.Text("Canceled."))
	if _, err := agent.Run(context.Background(), "Stop watering the plants."); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	listed := reqs[1].ToolResults()[0].Content
	if !strings.Contains(listed, a.ID) || !strings.Contains(listed, "water the plants") || strings.Count(listed, "T08:00:00+01:00") != 2 {
		t.Errorf("list_automations said %s; want the automation with its two runs left", listed)
	}
	if got := reqs[2].ToolResults()[1].Content; !strings.Contains(got, "canceled "+a.ID) {
		t.Errorf("cancel_automation said %s", got)
	}
	if got := reqs[3].ToolResults()[2].Content; !strings.Contains(got, `no automation has id "auto_nope": there are none`) {
		t.Errorf("cancel of an unknown id said %s", got)
	}
	if as := list(t, l); len(as) != 0 {
		t.Errorf("still there: %+v", as)
	}
}

// TestSameCallTwice: the same call (one idempotency key) run twice, as a
// runtime that retried it would, makes one automation.
func TestSameCallTwice(t *testing.T) {
	s := oniontest.NewServer(t)
	l, agent := agentWith(t, s, &approvals{yes: true}, automation.Limits{})
	tool, _ := agent.Tools().Get("start_automation")
	call := onion.Call{ID: "call_1", Arguments: json.RawMessage(weekly), RunID: "run_1", IdempotencyKey: "run_1:call_1"}
	first := drive.RunCall(context.Background(), tool, call, drive.CallConfigOf(agent))
	second := drive.RunCall(context.Background(), tool, call, drive.CallConfigOf(agent))
	if first.Outcome != onion.Succeeded || second.Outcome != onion.Succeeded || first.Output != second.Output {
		t.Errorf("the calls: %+v\n%+v; want the same result twice", first, second)
	}
	if as := list(t, l); len(as) != 1 {
		t.Errorf("%d automations, want 1", len(as))
	}
}

// TestSameCallAfterCancel: the call repeated after its automation was
// canceled tells the model so and schedules nothing.
func TestSameCallAfterCancel(t *testing.T) {
	s := oniontest.NewServer(t)
	l, agent := agentWith(t, s, &approvals{yes: true}, automation.Limits{})
	tool, _ := agent.Tools().Get("start_automation")
	call := onion.Call{ID: "call_1", Arguments: json.RawMessage(weekly), RunID: "run_1", IdempotencyKey: "run_1:call_1"}
	first := drive.RunCall(context.Background(), tool, call, drive.CallConfigOf(agent))
	as := list(t, l)
	if first.Outcome != onion.Succeeded || len(as) != 1 {
		t.Fatalf("the first call: %+v, automations %+v", first, as)
	}
	if err := l.Cancel(context.Background(), as[0].ID); err != nil {
		t.Fatal(err)
	}
	again := drive.RunCall(context.Background(), tool, call, drive.CallConfigOf(agent))
	var got struct {
		ID       string   `json:"id"`
		NextRuns []string `json:"next_runs"`
		Status   string   `json:"status"`
	}
	if err := json.Unmarshal([]byte(again.Output), &got); err != nil {
		t.Fatalf("the call again said %s: %v", again.Output, err)
	}
	if got.ID != as[0].ID || len(got.NextRuns) != 0 || !strings.Contains(got.Status, "was canceled at") || !strings.Contains(got.Status, "nothing was scheduled again") {
		t.Errorf("the call again said %s; want the canceled automation, no next runs", again.Output)
	}
	if as := list(t, l); len(as) != 0 {
		t.Errorf("the call again made %+v", as)
	}
}

func TestToolIntents(t *testing.T) {
	l, err := automation.NewLocal("", automation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tools, err := automation.Tools(l, "assistant")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]onion.Intent{"start_automation": onion.Write, "list_automations": onion.Read, "cancel_automation": onion.Delete}
	for _, tool := range tools {
		if tool.Intent() != want[tool.Name()] || tool.Idempotent() {
			t.Errorf("%s: intent %s, idempotent %v", tool.Name(), tool.Intent(), tool.Idempotent())
		}
		if !strings.Contains(tool.Description(), "only when the user explicitly asked for a future or recurring run") {
			t.Errorf("%s: description %q", tool.Name(), tool.Description())
		}
		needs := tool.NeedsApproval(context.Background(), onion.Call{})
		if needs != (tool.Name() == "start_automation") {
			t.Errorf("%s needs approval: %v", tool.Name(), needs)
		}
	}
	tools, _ = automation.Tools(l, "assistant", onion.NoApproval())
	if tools[0].NeedsApproval(context.Background(), onion.Call{}) {
		t.Error("onion.NoApproval() did not lift the approval")
	}
}
