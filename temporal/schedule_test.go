package temporal

import (
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/automation"
)

// The schedules against a server are tested in module
// github.com/onionkit/onion/temporal/devserver (schedule_test.go); these
// check what is asked of it.

func TestScheduleIDFromIdempotencyKey(t *testing.T) {
	a, b := ScheduleID("run_1:call_1"), ScheduleID("run_1:call_2")
	if a != ScheduleID("run_1:call_1") || a == b || !strings.HasPrefix(a, SchedulePrefix) {
		t.Errorf("ScheduleID: %s, %s", a, b)
	}
}

func TestScheduleOptions(t *testing.T) {
	if _, err := NewScheduler(nil, "q", SchedulerOptions{}); err == nil {
		t.Fatal("a nil client was taken")
	}
	s := &Scheduler{taskQueue: "agents", catchup: time.Minute, settings: defaultSettings()}
	s.settings.ApprovalTimeout = time.Hour
	now := time.Now()
	cron, err := automation.Limits{}.Admit(automation.Automation{Agent: "reporter", Input: "check the sales report",
		Schedule: automation.Schedule{Cron: "0 9 * * MON", TimeZone: "Europe/Paris", MaxRuns: 4}}, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	cron.ID = ScheduleID("k")
	o := s.options(cron)
	act, ok := o.Action.(*client.ScheduleWorkflowAction)
	if !ok || act.Workflow != WorkflowName || act.TaskQueue != "agents" || len(act.Args) != 1 {
		t.Fatalf("action %+v; want the durable run on agents", o.Action)
	}
	if in := act.Args[0].(runInput); in.Agent != "reporter" || in.Prompt != "check the sales report" || in.Settings.ApprovalTimeout != time.Hour || in.History != nil {
		t.Errorf("run input %+v", in)
	}
	if o.ID != cron.ID || o.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP || o.CatchupWindow != time.Minute || o.RemainingActions != 4 {
		t.Errorf("options %+v; want overlap skip, a minute's catch-up, 4 runs", o)
	}
	if o.Spec.TimeZoneName != "Europe/Paris" || len(o.Spec.CronExpressions) != 1 || o.Spec.CronExpressions[0] != "0 9 * * MON" {
		t.Errorf("spec %+v", o.Spec)
	}
	if o.Memo[memoKey].(automation.Automation).Input != "check the sales report" {
		t.Errorf("memo %+v", o.Memo)
	}

	paris, _ := time.LoadLocation("Europe/Paris")
	at := time.Date(2030, 3, 31, 2, 30, 5, 0, time.UTC).In(paris)
	once, err := automation.Limits{}.Admit(automation.Automation{Agent: "reporter", Input: "remind me",
		Schedule: automation.Schedule{At: at, TimeZone: "Europe/Paris"}}, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	o = s.options(once)
	c := o.Spec.Calendars
	if len(c) != 1 || o.Spec.TimeZoneName != "UTC" || o.RemainingActions != 1 || c[0].Year[0].Start != 2030 || c[0].Month[0].Start != 3 ||
		c[0].DayOfMonth[0].Start != 31 || c[0].Hour[0].Start != 2 || c[0].Minute[0].Start != 30 || c[0].Second[0].Start != 5 {
		t.Errorf("one-shot spec %+v, remaining %d; want 2030-03-31 02:30:05 UTC once", o.Spec, o.RemainingActions)
	}
}

func TestNewSchedulerRefusesRunIdentity(t *testing.T) {
	for _, o := range []StartOption{WorkflowID("x"), History([]onion.Message{{Role: onion.RoleUser, Content: "hi"}})} {
		if _, err := NewScheduler(fakeClient{}, "q", SchedulerOptions{Run: []StartOption{o}}); err == nil || !strings.Contains(err.Error(), "do not apply") {
			t.Errorf("%v", err)
		}
	}
	type verdict struct {
		OK bool `json:"ok"`
	}
	if _, err := NewScheduler(fakeClient{}, "q", SchedulerOptions{Run: []StartOption{Answer[verdict]()}}); err == nil || !strings.Contains(err.Error(), "Answer does not apply") {
		t.Errorf("Answer in a scheduler's run options: err = %v, want it refused rather than dropped", err)
	}
	if _, err := NewScheduler(fakeClient{}, "q", SchedulerOptions{CatchupWindow: time.Second}); err == nil {
		t.Error("a catch-up window of 1s was taken")
	}
}

// fakeClient is a non-nil client for constructors that only keep it.
type fakeClient struct{ client.Client }
