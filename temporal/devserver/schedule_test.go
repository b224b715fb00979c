package devserver_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/automation"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
)

// TestScheduleFiresDurableRun makes an automation on the embedded server,
// fires it at once with Trigger (its cron's next fire is days away), sees
// the durable run it started answer, and cancels it.
func TestScheduleFiresDurableRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, model, c := crashSetup(t, oniontest.Text("Sales are up 4% on last week."))
	done := make(chan *onion.Result, 1)
	agent, err := onion.NewAgent("reporter", onion.BaseURL(model.URL()), onion.APIKey("test"),
		onion.Hooks{OnComplete: func(_ context.Context, r *onion.Result) { done <- r }})
	if err != nil {
		t.Fatal(err)
	}
	w, err := temporal.NewWorker(c, "automations", agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	s, err := temporal.NewScheduler(c, "automations", temporal.SchedulerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := automation.Automation{Agent: "reporter", Input: "Check the sales report and tell me what changed.", IdempotencyKey: "run_1:call_1",
		Schedule: automation.Schedule{Cron: "0 9 * * MON", TimeZone: "Europe/Paris"}}
	a, err := s.Create(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != temporal.ScheduleID("run_1:call_1") {
		t.Errorf("schedule ID %s, want the one of the idempotency key", a.ID)
	}
	again, err := s.Create(ctx, want)
	if err != nil || again.ID != a.ID || again.Input != want.Input {
		t.Errorf("the same call again: %+v, %v; want the first automation", again, err)
	}

	h := c.ScheduleClient().GetHandle(ctx, a.ID)
	d, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := d.Schedule.Policy; p.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP || p.CatchupWindow != time.Minute {
		t.Errorf("policies %+v; want overlap skip and a catch-up window of a minute", p)
	}
	if len(d.Info.NextActionTimes) == 0 || !d.Info.NextActionTimes[0].Equal(a.Next) {
		t.Errorf("the server's next fire %v, the automation's %s", d.Info.NextActionTimes, a.Next)
	}

	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	var res *onion.Result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("the fire's run did not end")
	}
	// The run is the durable workflow, on the server's record.
	run := c.GetWorkflow(ctx, res.RunID, "")
	recorded, err := temporal.Result(ctx, run)
	if err != nil || recorded.Output != "Sales are up 4% on last week." {
		t.Fatalf("the fire's run %s: %+v, %v", res.RunID, recorded, err)
	}
	if reqs := model.Requests(); len(reqs) != 1 || reqs[0].Body.Messages[len(reqs[0].Body.Messages)-1].Content != want.Input {
		t.Errorf("the model was asked %+v; want the automation's input", reqs)
	}
	desc, err := c.DescribeWorkflowExecution(ctx, res.RunID, "")
	if err != nil || desc.WorkflowExecutionInfo.Type.Name != temporal.WorkflowName {
		t.Errorf("the fire started %+v, %v; want %s", desc, err, temporal.WorkflowName)
	}

	listed, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Listing is eventually consistent: the schedule may not be listed yet,
	// but once listed it carries its run.
	if i := slices.IndexFunc(listed, func(l automation.Automation) bool { return l.ID == a.ID }); i >= 0 && (listed[i].Runs != 1 || listed[i].Input != want.Input) {
		t.Errorf("listed %+v; want one run", listed[i])
	}

	if err := s.Cancel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	var nf *serviceerror.NotFound
	if _, err := h.Describe(ctx); !errors.As(err, &nf) {
		t.Errorf("after Cancel the schedule is described: %v", err)
	}
	if err := s.Cancel(ctx, a.ID); !errors.Is(err, automation.ErrNotFound) {
		t.Errorf("canceling again: %v", err)
	}
}
