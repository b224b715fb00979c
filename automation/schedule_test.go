package automation_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/automation"
)

func paris(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatalf("this machine has no zoneinfo for Europe/Paris: %v", err)
	}
	return loc
}

// fires lists n fires of s after from, as RFC 3339 times.
func fires(s automation.Schedule, from time.Time, n int) []string {
	var out []string
	for t := from; len(out) < n; {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t.Format(time.RFC3339))
	}
	return out
}

// TestCronAcrossDSTInParis: in 2026 Paris springs forward on 29 March
// (02:00 CET → 03:00 CEST) and falls back on 25 October (03:00 CEST →
// 02:00 CET). A daily 09:00 stays 09:00 on the wall clock; 02:30, which
// the clock skips in March, fires once at 03:30; 02:30, which it shows
// twice in October, fires once.
func TestCronAcrossDSTInParis(t *testing.T) {
	loc := paris(t)
	spring := time.Date(2026, 3, 28, 12, 0, 0, 0, loc)
	autumn := time.Date(2026, 10, 24, 12, 0, 0, 0, loc)
	for _, tc := range []struct {
		cron string
		from time.Time
		want []string
	}{
		{"0 9 * * *", spring, []string{"2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"}},
		{"0 9 * * *", time.Date(2026, 3, 27, 12, 0, 0, 0, loc), []string{"2026-03-28T09:00:00+01:00", "2026-03-29T09:00:00+02:00"}},
		{"0 9 * * *", autumn, []string{"2026-10-25T09:00:00+01:00", "2026-10-26T09:00:00+01:00"}},
		{"0 9 * * *", time.Date(2026, 10, 23, 12, 0, 0, 0, loc), []string{"2026-10-24T09:00:00+02:00", "2026-10-25T09:00:00+01:00"}},
		{"30 2 * * *", spring, []string{"2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"30 2 * * *", autumn, []string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		// 02:30 skipped lands on 03:30, which the cron names too: once.
		{"30 2,3 * * *", spring, []string{"2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00"}},
		// Every half hour through the night the clock falls back: each
		// wall time once, so the hour shown twice is not run twice.
		{"*/30 1-3 25 10 *", autumn, []string{"2026-10-25T01:00:00+02:00", "2026-10-25T01:30:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T03:30:00+01:00"}},
		{"*/30 1-3 29 3 *", spring, []string{"2026-03-29T01:00:00+01:00", "2026-03-29T01:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00"}},
	} {
		s := automation.Schedule{Cron: tc.cron, TimeZone: "Europe/Paris"}
		if got := fires(s, tc.from, len(tc.want)); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s after %s:\n got %v\nwant %v", tc.cron, tc.from.Format(time.RFC3339), got, tc.want)
		}
	}
}

// TestFireOnceAfterEachInstant: from any instant of the night the clock
// falls back, the next fire of a 02:30 cron is later than that instant,
// and none is listed twice.
func TestFireOnceAfterEachInstant(t *testing.T) {
	loc := paris(t)
	s := automation.Schedule{Cron: "30 2 * * *", TimeZone: "Europe/Paris"}
	start := time.Date(2026, 10, 25, 1, 0, 0, 0, loc)
	seen := map[string]bool{}
	for at := start; at.Before(start.Add(4 * time.Hour)); at = at.Add(10 * time.Minute) {
		n := s.Next(at)
		if !n.After(at) {
			t.Fatalf("Next(%s) = %s, not after", at.Format(time.RFC3339), n.Format(time.RFC3339))
		}
		seen[n.Format(time.RFC3339)] = true
	}
	if len(seen) != 2 { // 02:30 CEST on the 25th, then 02:30 CET on the 26th
		t.Errorf("fires seen: %v, want 2", seen)
	}
}

func TestNormalizeRefuses(t *testing.T) {
	loc := paris(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		s    automation.Schedule
		want string // in the sentence
	}{
		{"unknown zone", automation.Schedule{Cron: "0 9 * * *", TimeZone: "Mars/Olympus"}, "not a known IANA time zone"},
		{"no zone", automation.Schedule{Cron: "0 9 * * *"}, "time_zone is empty"},
		{"local", automation.Schedule{Cron: "0 9 * * *", TimeZone: "Local"}, "names no zone"},
		{"bad cron", automation.Schedule{Cron: "0 25 * * *", TimeZone: "UTC"}, "does not parse"},
		{"six fields", automation.Schedule{Cron: "0 0 9 * * *", TimeZone: "UTC"}, "does not parse"},
		{"descriptor", automation.Schedule{Cron: "@daily", TimeZone: "UTC"}, "not five fields"},
		{"zone in cron", automation.Schedule{Cron: "CRON_TZ=UTC 0 9 * * *", TimeZone: "UTC"}, "not five fields"},
		{"both days", automation.Schedule{Cron: "0 9 1 * MON", TimeZone: "UTC"}, "both a day of month and a day of week"},
		{"never", automation.Schedule{Cron: "0 9 31 2 *", TimeZone: "UTC"}, "never fires"},
		{"every minute", automation.Schedule{Cron: "*/1 * * * *", TimeZone: "UTC"}, "no closer than 5m0s"},
		{"two close once a day", automation.Schedule{Cron: "0,2 9 * * *", TimeZone: "UTC"}, "2m0s apart"},
		{"past", automation.Schedule{At: now.Add(-time.Hour), TimeZone: "UTC"}, "not in the future"},
		{"now", automation.Schedule{At: now, TimeZone: "UTC"}, "not in the future"},
		{"neither", automation.Schedule{TimeZone: "UTC"}, "either at"},
		{"both", automation.Schedule{At: now.Add(time.Hour), Cron: "0 9 * * *", TimeZone: "UTC"}, "not both"},
		{"end past", automation.Schedule{Cron: "0 9 * * *", TimeZone: "UTC", End: now.Add(-time.Minute)}, "end time"},
		{"end before first", automation.Schedule{Cron: "0 9 * * *", TimeZone: "UTC", End: now.Add(time.Hour)}, "after the end"},
		{"at after end", automation.Schedule{At: now.Add(2 * time.Hour), TimeZone: "UTC", End: now.Add(time.Hour)}, "after the end"},
		{"negative runs", automation.Schedule{Cron: "0 9 * * *", TimeZone: "UTC", MaxRuns: -1}, "max_runs"},
	} {
		_, err := tc.s.Normalize(now, 5*time.Minute)
		if !errors.Is(err, automation.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrRefused saying %q", tc.name, err, tc.want)
		}
	}
	// Accepted ones come back normalized.
	s, err := automation.Schedule{Cron: " 0  9 * *   MON ", TimeZone: "Europe/Paris"}.Normalize(now, 5*time.Minute)
	if err != nil || s.Cron != "0 9 * * MON" {
		t.Errorf("got %+v, %v; want the cron in single spaces", s, err)
	}
	at := now.Add(time.Hour + 1500*time.Millisecond)
	s, err = automation.Schedule{At: at, TimeZone: "Europe/Paris", MaxRuns: 3}.Normalize(now, 5*time.Minute)
	if err != nil || !s.At.Equal(at.Truncate(time.Second)) || s.At.Location().String() != loc.String() || s.MaxRuns != 0 {
		t.Errorf("got %+v, %v; want at to the second, in Paris, with no run limit", s, err)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, c := range []string{"0 9 * * MON", "*/15 * * * *", "30 2 * * *", "0 9 31 2 *", "@every 1m", "", "* * * * * *", "0-59/7 0-23/5 1,15 */2 1-5", "TZ=UTC 0 9 * * *"} {
		f.Add(c, "Europe/Paris")
	}
	f.Add("0 9 * * *", "Australia/Lord_Howe")
	now := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, cron, zone string) {
		s, err := automation.Schedule{Cron: cron, TimeZone: zone}.Normalize(now, time.Minute)
		if err != nil {
			if !errors.Is(err, automation.ErrRefused) {
				t.Fatalf("%v does not wrap ErrRefused", err)
			}
			return
		}
		// An accepted schedule fires, later each time, at least a minute apart.
		prev := now
		for i := range 20 {
			n := s.Next(prev)
			if n.IsZero() {
				if i == 0 {
					t.Fatalf("%q in %s accepted but never fires", cron, zone)
				}
				return
			}
			if i > 0 && n.Sub(prev) < time.Minute {
				t.Fatalf("%q in %s fires %s apart", cron, zone, n.Sub(prev))
			}
			prev = n
		}
	})
}
