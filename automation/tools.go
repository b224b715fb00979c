package automation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/onionkit/onion"
)

// This file is the tools a model schedules with: start_automation,
// list_automations and cancel_automation.

const explicitOnly = "An automation is created only when the user explicitly asked for a future or recurring run (\"every Monday at 9, check the sales report\", \"tomorrow at 8, remind me\"): never on your own initiative, and never for something to do now."

const startDescription = "Schedule input for this agent to run later: once (at) or on a recurring schedule (cron), in the user's time zone. " + explicitOnly +
	" Each run is a fresh run that starts from the input alone, so write the input as the complete request. The result shows the schedule as stored and its next three runs: tell them to the user to confirm."

const listDescription = "List the active automations (scheduled runs) of this agent, with their schedules and next runs. " + explicitOnly

const cancelDescription = "Cancel an automation by its id so that it never runs again, when the user asks to stop a scheduled or recurring run (list_automations shows the ids). " + explicitOnly

// startArgs are start_automation's parameters.
type startArgs struct {
	Input    string `json:"input" doc:"the request the agent gets at each run, complete and as the user meant it, e.g. \"Check the sales report and tell me what changed since last week\""`
	At       string `json:"at,omitempty" doc:"for one run: its date and time, e.g. 2026-12-24T09:00 (read in time_zone) or 2026-12-24T09:00:00+01:00; leave empty with cron"`
	Cron     string `json:"cron,omitempty" doc:"for recurring runs: five fields, minute hour day-of-month month day-of-week, e.g. \"0 9 * * MON\" for Mondays at 9:00 or \"30 8 1 * *\" for the 1st of each month at 8:30; leave empty with at"`
	TimeZone string `json:"time_zone" doc:"the user's IANA time zone, e.g. Europe/Paris or America/New_York; cron is read on its clock"`
	End      string `json:"end,omitempty" doc:"optional: no run after this date and time, in the same form as at"`
	MaxRuns  int    `json:"max_runs,omitempty" doc:"optional: stop after this many runs"`
}

// cancelArgs are cancel_automation's parameters.
type cancelArgs struct {
	ID string `json:"id" doc:"the automation's id, as start_automation or list_automations gave it"`
}

// view is an automation as the tools show it.
type view struct {
	ID       string   `json:"id"`
	Input    string   `json:"input"`
	Schedule Schedule `json:"schedule"`
	Runs     int      `json:"runs,omitempty"`
	NextRuns []string `json:"next_runs"`
	// Status says that the automation has ended, for a repeated call that
	// made it before.
	Status string `json:"status,omitempty"`
}

func viewOf(a Automation, now time.Time) view {
	v := view{ID: a.ID, Input: a.Input, Schedule: a.Schedule, Runs: a.Runs, NextRuns: []string{}}
	loc, err := a.Schedule.location()
	if err != nil {
		loc = time.UTC
	}
	if !a.Ended.IsZero() {
		ended := show(a.Ended.In(loc))
		if a.Canceled {
			v.Status = fmt.Sprintf("this same call made it before, and it was canceled at %s: nothing was scheduled again", ended)
		} else {
			v.Status = fmt.Sprintf("this same call made it before, and it ended at %s after %d run(s), with none left: nothing was scheduled again", ended, a.Runs)
		}
		return v
	}
	from := now
	if !a.Next.IsZero() { // the scheduler's own next fire comes first
		from = a.Next.Add(-time.Nanosecond)
	}
	for _, t := range a.Fires(from, 3) {
		t = t.In(loc)
		v.NextRuns = append(v.NextRuns, show(t)+" ("+t.Weekday().String()+")")
	}
	return v
}

// Tools returns the tools start_automation, list_automations and
// cancel_automation over s, for the agent named agent: the automations
// they make run that agent, and they list and cancel only its own.
//
// start_automation is a write that asks the agent's Approver before every
// call (RequireApproval) and runs once, never retried; it passes the
// call's IdempotencyKey (from the Call onion.CallInfo(ctx) returns) to Create, so the same call
// made twice makes one automation. opts apply to it after those defaults:
// onion.NoApproval() lifts the approval. list_automations is a read and
// cancel_automation a delete.
func Tools(s Scheduler, agent string, opts ...onion.ToolOption) ([]*onion.Tool, error) {
	if s == nil {
		return nil, errors.New("automation.Tools: the Scheduler is nil")
	}
	if strings.TrimSpace(agent) == "" {
		return nil, errors.New("automation.Tools: name the agent the automations run")
	}
	own := func(ctx context.Context) ([]Automation, error) {
		all, err := s.List(ctx)
		if err != nil {
			return nil, err
		}
		var out []Automation
		for _, a := range all {
			if a.Agent == agent {
				out = append(out, a)
			}
		}
		return out, nil
	}
	start := func(ctx context.Context, in startArgs) (view, error) {
		sched, err := scheduleOf(in)
		if err != nil {
			return view{}, err
		}
		a := Automation{Agent: agent, Input: in.Input, Schedule: sched}
		if call, ok := onion.CallInfo(ctx); ok {
			a.IdempotencyKey = call.IdempotencyKey
		}
		a, err = s.Create(ctx, a)
		if err != nil {
			return view{}, err
		}
		return viewOf(a, time.Now()), nil
	}
	list := func(ctx context.Context, _ struct{}) ([]view, error) {
		as, err := own(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]view, 0, len(as))
		now := time.Now()
		for _, a := range as {
			out = append(out, viewOf(a, now))
		}
		return out, nil
	}
	cancel := func(ctx context.Context, in cancelArgs) (string, error) {
		as, err := own(ctx)
		if err != nil {
			return "", err
		}
		var ids []string
		for _, a := range as {
			if a.ID == in.ID {
				if err := s.Cancel(ctx, a.ID); err != nil {
					return "", err
				}
				return fmt.Sprintf("canceled %s (%s): it will not run again", a.ID, a.Schedule), nil
			}
			ids = append(ids, a.ID)
		}
		if len(ids) == 0 {
			return "", fmt.Errorf("no automation has id %q: there are none", in.ID)
		}
		return "", fmt.Errorf("no automation has id %q: the active ones are %s", in.ID, strings.Join(ids, ", "))
	}
	startOpts := append([]onion.ToolOption{onion.Name("start_automation"), onion.Description(startDescription), onion.Write, onion.RequireApproval()}, opts...)
	t1, err := onion.NewTypedTool(start, startOpts...)
	if err != nil {
		return nil, fmt.Errorf("automation.Tools: %w", err)
	}
	t2, err := onion.NewTypedTool(list, onion.Name("list_automations"), onion.Description(listDescription), onion.Read, onion.NoApproval())
	if err != nil {
		return nil, fmt.Errorf("automation.Tools: %w", err)
	}
	t3, err := onion.NewTypedTool(cancel, onion.Name("cancel_automation"), onion.Description(cancelDescription), onion.Delete, onion.NoApproval())
	if err != nil {
		return nil, fmt.Errorf("automation.Tools: %w", err)
	}
	return []*onion.Tool{t1, t2, t3}, nil
}

// scheduleOf reads start_automation's times in its time zone.
func scheduleOf(in startArgs) (Schedule, error) {
	s := Schedule{Cron: in.Cron, TimeZone: in.TimeZone, MaxRuns: in.MaxRuns}
	loc, err := s.location()
	if err != nil {
		return Schedule{}, err
	}
	if s.At, err = parseTime("at", in.At, loc); err != nil {
		return Schedule{}, err
	}
	if s.End, err = parseTime("end", in.End, loc); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// timeLayouts are the forms parseTime reads: with an offset, or a wall
// time in the zone.
var timeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05"}

func parseTime(field, s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, refuse("%s %q is not a date and time: write it as 2026-12-24T09:00 (read in time_zone) or 2026-12-24T09:00:00+01:00", field, s)
}
