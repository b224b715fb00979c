package automation_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/onionkit/onion/automation"
)

// This file holds the schedule past its end: repeats that end, the ended
// automations a store keeps, and a store written before it kept them.

// TestRepeatAfterEnd: the call that made an automation, repeated after
// the automation ended (a one-shot that ran, a cron canceled), returns the
// ended automation and schedules nothing, before and after a restart.
func TestRepeatAfterEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "automations.json")
		h := open(t, path, nil, automation.Options{})
		once := automation.Automation{Input: "remind me to call Ann", IdempotencyKey: "run_1:call_1",
			Schedule: automation.Schedule{At: time.Now().Add(time.Hour), TimeZone: "UTC"}}
		daily := automation.Automation{Input: "daily digest", IdempotencyKey: "run_1:call_2",
			Schedule: automation.Schedule{Cron: "0 9 * * *", TimeZone: "UTC"}}
		ranID := create(t, h, once).ID
		canceledID := create(t, h, daily).ID
		if err := h.Cancel(context.Background(), canceledID); err != nil {
			t.Fatal(err)
		}
		until(time.Now().Add(2 * time.Hour))
		ranAt, canceledAt := once.Schedule.At, time.Now().Add(-2*time.Hour)
		check := func(when string, h *harness) {
			t.Helper()
			ran := create(t, h, once)
			if ran.ID != ranID || !ran.Ended.Equal(ranAt) || ran.Canceled || ran.Runs != 1 || !ran.Next.IsZero() {
				t.Errorf("%s, the one-shot's call again: %+v; want %s, ended at %s after 1 run", when, ran, ranID, ranAt)
			}
			canceled := create(t, h, daily)
			if canceled.ID != canceledID || !canceled.Ended.Equal(canceledAt) || !canceled.Canceled || !canceled.Next.IsZero() {
				t.Errorf("%s, the canceled cron's call again: %+v; want %s, canceled at %s", when, canceled, canceledID, canceledAt)
			}
			if as := list(t, h); len(as) != 0 {
				t.Errorf("%s, the repeated calls made %+v", when, as)
			}
		}
		check("before the restart", h)
		h.Close()
		h2 := open(t, path, nil, automation.Options{})
		check("after the restart", h2)
		until(time.Now().Add(48 * time.Hour))
		if n := len(h.got()) + len(h2.got()); n != 1 {
			t.Errorf("%d fires; want the one-shot's only", n)
		}
		other := daily
		other.IdempotencyKey = "run_2:call_1"
		if a := create(t, h2, other); a.ID == canceledID || !a.Ended.IsZero() {
			t.Errorf("another call was taken for the canceled one: %+v", a)
		}
	})
}

// TestEndedBounded: the last MaxEnded ended automations are remembered;
// a call older than those makes a new automation.
func TestEndedBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := open(t, "", nil, automation.Options{})
		a := automation.Automation{Input: "x", Schedule: automation.Schedule{At: time.Now().Add(time.Hour), TimeZone: "UTC"}}
		for i := range automation.MaxEnded + 1 {
			a.IdempotencyKey = fmt.Sprintf("run:call_%d", i)
			if err := h.Cancel(context.Background(), create(t, h, a).ID); err != nil {
				t.Fatal(err)
			}
		}
		a.IdempotencyKey = "run:call_1"
		if got := create(t, h, a); !got.Canceled {
			t.Errorf("the oldest call remembered made %+v", got)
		}
		a.IdempotencyKey = "run:call_0"
		if got := create(t, h, a); got.Canceled || !got.Ended.IsZero() || len(list(t, h)) != 1 {
			t.Errorf("a call older than the last %d ended: %+v; want a new automation", automation.MaxEnded, got)
		}
	})
}

// TestStoreWithoutEnded: a file written before ended automations were
// kept opens, and keeps its automations.
func TestStoreWithoutEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "automations.json")
		old := `{"automations":[{"id":"auto_1","agent":"reporter","input":"x","schedule":{"cron":"0 9 * * *","time_zone":"UTC"},"idempotency_key":"run:call_1","created":"1999-12-31T10:00:00Z","runs":2,"next":"2000-01-01T09:00:00Z"}]}`
		if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
			t.Fatal(err)
		}
		h := open(t, path, nil, automation.Options{})
		if as := list(t, h); len(as) != 1 || as[0].ID != "auto_1" || as[0].Runs != 2 {
			t.Fatalf("listed %+v; want auto_1", as)
		}
		got := create(t, h, automation.Automation{Input: "x", IdempotencyKey: "run:call_1", Schedule: automation.Schedule{Cron: "0 9 * * *", TimeZone: "UTC"}})
		if got.ID != "auto_1" {
			t.Errorf("the call again made %+v", got)
		}
	})
}
