package temporal

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/onionkit/onion/automation"
)

// This file is the automation.Scheduler on Temporal Schedules: each
// automation is a schedule whose action starts a durable run.

// SchedulePrefix begins the ID of every schedule a Scheduler makes; List
// and Cancel see only those.
const SchedulePrefix = "onion-automation-"

// memoKey is the schedule memo field that holds the automation.
const memoKey = "onion.automation"

// SchedulerOptions configure a Scheduler.
type SchedulerOptions struct {
	// Limits bound what Create accepts.
	Limits automation.Limits
	// CatchupWindow is how late a fire may still start after the server
	// was unavailable (default one minute; Temporal's least is 10 s). Fires
	// later than that are skipped, never caught up.
	CatchupWindow time.Duration
	// Run configures the durable run of each fire, as Start's options do
	// (ApprovalTimeout, ModelRetries…); WorkflowID, History and Answer do
	// not apply, and NewScheduler refuses them.
	Run []StartOption
}

// Scheduler is an automation.Scheduler on Temporal Schedules, for runs
// that must fire whether or not a given process is up: each automation is
// a schedule on the server whose every fire starts the durable run
// workflow (WorkflowName) of the automation's agent on the task queue,
// which workers built with NewWorker and that agent serve.
//
// The schedule's ID is SchedulePrefix and a hash of the automation's
// IdempotencyKey, so the same tool call made twice finds the schedule of
// the first; its overlap policy is skip (a fire while the previous run
// goes on starts nothing), its catch-up window small, so missed fires are
// not run in a burst when the server comes back. Approvals inside a fire
// wait for Approve as in any durable run. Cron expressions are given to
// the server with the time zone, and the server places them on the clock:
// on the two days a year the clock changes, it does not run a time the
// clock skips and runs twice a time the clock shows twice (the Local
// scheduler runs each once); the fire times the tools show are the
// automation package's.
//
// Listing is eventually consistent on the server, so MaxActive may be
// passed by automations made at the same moment.
type Scheduler struct {
	c         client.Client
	taskQueue string
	limits    automation.Limits
	catchup   time.Duration
	settings  settings
}

var _ automation.Scheduler = (*Scheduler)(nil)

// NewScheduler returns a Scheduler whose automations run on taskQueue.
func NewScheduler(c client.Client, taskQueue string, opts SchedulerOptions) (*Scheduler, error) {
	if c == nil || taskQueue == "" {
		return nil, errors.New("temporal.NewScheduler: give a client and a task queue")
	}
	cfg, err := newStartConfig(opts.Run)
	if err != nil {
		return nil, err
	}
	if cfg.workflowID != "" || cfg.history != nil {
		return nil, errors.New("temporal.NewScheduler: WorkflowID and History do not apply to automations: each fire is a new run")
	}
	if cfg.answer != nil {
		return nil, errors.New("temporal.NewScheduler: Answer does not apply to automations: a fire's answer goes to the program as text, and no caller waits to decode it")
	}
	catchup := cmp.Or(opts.CatchupWindow, time.Minute)
	if catchup < 10*time.Second {
		return nil, fmt.Errorf("temporal.NewScheduler: catch-up window %v is under Temporal's least, 10s", catchup)
	}
	return &Scheduler{c: c, taskQueue: taskQueue, limits: opts.Limits, catchup: catchup, settings: cfg.settings}, nil
}

// ScheduleID is the ID of the schedule of the automation made with
// idempotencyKey.
func ScheduleID(idempotencyKey string) string {
	sum := sha256.Sum256([]byte(idempotencyKey))
	return SchedulePrefix + hex.EncodeToString(sum[:12])
}

// Create validates the automation (automation.Limits.Admit) and makes its
// schedule, or returns the automation of the schedule that a.IdempotencyKey
// made already.
func (s *Scheduler) Create(ctx context.Context, a automation.Automation) (automation.Automation, error) {
	var id string
	if a.IdempotencyKey != "" {
		id = ScheduleID(a.IdempotencyKey)
		if old, err := s.describe(ctx, id); err == nil {
			return old, nil
		} else if !errors.Is(err, automation.ErrNotFound) {
			return automation.Automation{}, err
		}
	} else {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = SchedulePrefix + hex.EncodeToString(b[:])
	}
	active, err := s.List(ctx)
	if err != nil {
		return automation.Automation{}, err
	}
	a, err = s.limits.Admit(a, time.Now(), len(active))
	if err != nil {
		return automation.Automation{}, err
	}
	a.ID = id
	opts := s.options(a)
	if _, err := s.c.ScheduleClient().Create(ctx, opts); err != nil {
		if errors.Is(err, temporal.ErrScheduleAlreadyRunning) { // made meanwhile by the same call
			return s.describe(ctx, id)
		}
		return automation.Automation{}, fmt.Errorf("temporal: create schedule %s: %w", id, err)
	}
	return a, nil
}

// options are the schedule of the admitted automation a.
func (s *Scheduler) options(a automation.Automation) client.ScheduleOptions {
	sc := a.Schedule
	spec := client.ScheduleSpec{EndAt: sc.End}
	remaining := sc.MaxRuns
	if sc.Cron != "" {
		spec.CronExpressions = []string{sc.Cron}
		spec.TimeZoneName = sc.TimeZone
	} else {
		// One instant, in UTC, where every wall time exists once.
		at := sc.At.UTC()
		one := func(v int) []client.ScheduleRange { return []client.ScheduleRange{{Start: v}} }
		spec.Calendars = []client.ScheduleCalendarSpec{{
			Second: one(at.Second()), Minute: one(at.Minute()), Hour: one(at.Hour()),
			DayOfMonth: one(at.Day()), Month: one(int(at.Month())), Year: one(at.Year()),
		}}
		spec.TimeZoneName = "UTC"
		remaining = 1
	}
	in := runInput{Agent: a.Agent, Prompt: a.Input, Settings: s.settings}
	return client.ScheduleOptions{
		ID:               a.ID,
		Spec:             spec,
		Action:           &client.ScheduleWorkflowAction{ID: a.ID, Workflow: WorkflowName, Args: []any{in}, TaskQueue: s.taskQueue},
		Overlap:          enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow:    s.catchup,
		RemainingActions: remaining,
		Memo:             map[string]any{memoKey: a},
		Note:             "onion automation of agent " + a.Agent,
	}
}

// List returns the active automations (those with a fire left), the
// oldest first.
func (s *Scheduler) List(ctx context.Context) ([]automation.Automation, error) {
	ids, err := s.ids(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]automation.Automation, 0, len(ids))
	for _, id := range ids {
		a, err := s.describe(ctx, id)
		if errors.Is(err, automation.ErrNotFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, err
		}
		if !a.Next.IsZero() {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b automation.Automation) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Cancel deletes the schedule of the automation id; a run it started goes
// on.
func (s *Scheduler) Cancel(ctx context.Context, id string) error {
	if !strings.HasPrefix(id, SchedulePrefix) {
		return notFound(id)
	}
	err := s.c.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
	if isNotFound(err) {
		return notFound(id)
	}
	if err != nil {
		return fmt.Errorf("temporal: delete schedule %s: %w", id, err)
	}
	return nil
}

// ids lists the IDs of the schedules this package made.
func (s *Scheduler) ids(ctx context.Context) ([]string, error) {
	it, err := s.c.ScheduleClient().List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return nil, fmt.Errorf("temporal: list schedules: %w", err)
	}
	var ids []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("temporal: list schedules: %w", err)
		}
		if strings.HasPrefix(e.ID, SchedulePrefix) {
			ids = append(ids, e.ID)
		}
	}
	return ids, nil
}

// describe reads the automation of schedule id: as stored in its memo,
// with the server's count of runs and next fire.
func (s *Scheduler) describe(ctx context.Context, id string) (automation.Automation, error) {
	d, err := s.c.ScheduleClient().GetHandle(ctx, id).Describe(ctx)
	if isNotFound(err) {
		return automation.Automation{}, notFound(id)
	}
	if err != nil {
		return automation.Automation{}, fmt.Errorf("temporal: describe schedule %s: %w", id, err)
	}
	a, err := memoAutomation(d.Memo)
	if err != nil {
		return automation.Automation{}, fmt.Errorf("temporal: schedule %s: %w", id, err)
	}
	a.ID, a.Runs, a.Next = id, d.Info.NumActions, time.Time{}
	if d.Schedule.State != nil && d.Schedule.State.LimitedActions && d.Schedule.State.RemainingActions == 0 {
		return a, nil // no fire left
	}
	if len(d.Info.NextActionTimes) > 0 {
		a.Next = d.Info.NextActionTimes[0]
	}
	return a, nil
}

// notFound is the error of an automation id that has no schedule.
func notFound(id string) error {
	return fmt.Errorf("temporal: %w with id %q", automation.ErrNotFound, id)
}

// isNotFound reports whether err is the server's answer for a schedule
// that does not exist.
func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

func memoAutomation(m *commonpb.Memo) (automation.Automation, error) {
	var a automation.Automation
	p, ok := m.GetFields()[memoKey]
	if !ok {
		return a, errors.New("no automation in its memo")
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &a); err != nil {
		return a, fmt.Errorf("its memo: %w", err)
	}
	return a, nil
}
