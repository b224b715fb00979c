package automation

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// This file is when an automation fires: a one-shot time or a five-field
// cron expression read as wall-clock time in an IANA time zone, checked
// and normalized before anything is stored.

// Schedule says when an automation fires: once, At, or whenever its Cron
// expression matches the wall clock of TimeZone; either way not after End,
// when set, and at most MaxRuns times, when set.
type Schedule struct {
	// At is the time of a one-shot automation; zero for a recurring one.
	At time.Time `json:"at,omitzero"`
	// Cron is a five-field cron expression (minute, hour, day of month,
	// month, day of week), such as "0 9 * * MON"; empty for a one-shot.
	Cron string `json:"cron,omitempty"`
	// TimeZone is the IANA name of the zone Cron is read in and times
	// are shown in, such as "Europe/Paris".
	TimeZone string `json:"time_zone"`
	// End, when set, is the time after which the automation fires no more.
	End time.Time `json:"end,omitzero"`
	// MaxRuns, when above zero, is how many runs the automation makes at
	// most.
	MaxRuns int `json:"max_runs,omitempty"`
}

// cronParser reads the five standard fields and nothing else: no seconds,
// no @every or @daily descriptors, which other backends may not share.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// horizon and minGapFires bound the fires Normalize looks at to find a cron
// expression's shortest gap between two fires.
const (
	horizon     = 366 * 24 * time.Hour
	minGapFires = 2000
)

// maxCron and maxZone bound a cron expression and a zone's name, which
// errors quote: the longest IANA name is some 30 bytes, and five fields of
// lists fit easily.
const (
	maxCron = 512
	maxZone = 128
)

// maxSkips bounds the wall-clock candidates next looks at before giving up:
// one fire can stand for two candidates at most (the hour a clock skips).
const maxSkips = 8

// Normalize checks s as a new schedule at now and returns it in normal
// form: the zone a known IANA name, At in that zone and in the future and
// to the second, Cron in single spaces, restricting the day of the month or
// the day of the week but not both, and firing at least once and never
// twice within minInterval, End after now and after At. Its errors wrap
// ErrRefused and say what to change.
func (s Schedule) Normalize(now time.Time, minInterval time.Duration) (Schedule, error) {
	s, err := s.normal(now, minInterval)
	if err != nil {
		return Schedule{}, err
	}
	if !s.End.IsZero() && !s.End.After(now) {
		return Schedule{}, refuse("the end time %s is not in the future: give a later end or none", show(s.End))
	}
	if !s.At.IsZero() {
		if !s.At.After(now) {
			return Schedule{}, refuse("the time %s is not in the future (it is now %s): give a later time", show(s.At), show(now.In(s.At.Location())))
		}
		return s, nil
	}
	if !s.End.IsZero() && s.Next(now).IsZero() {
		first := Schedule{Cron: s.Cron, TimeZone: s.TimeZone}.Next(now)
		return Schedule{}, refuse("cron %q first fires at %s, after the end %s: give a later end", s.Cron, show(first), show(s.End))
	}
	return s, nil
}

// normal is what Normalize checks that does not depend on when it is
// checked: all but that At and End are in the future and that a cron fires
// before its End. The store checks an automation it loads with it, so that
// a file holds no schedule a new automation could not have (such as one
// firing every second), whatever its times. now is only where the cron's
// fires are looked at from.
func (s Schedule) normal(now time.Time, minInterval time.Duration) (Schedule, error) {
	if len(s.Cron) > maxCron {
		return Schedule{}, refuse("cron is %d bytes, over the limit of %d: write five fields, minute hour day-of-month month day-of-week, such as \"0 9 * * MON\"", len(s.Cron), maxCron)
	}
	loc, err := s.location()
	if err != nil {
		return Schedule{}, err
	}
	s.TimeZone = loc.String()
	s.Cron = strings.Join(strings.Fields(s.Cron), " ")
	switch {
	case s.At.IsZero() && s.Cron == "":
		return Schedule{}, refuse("give either at, the time of one run, or cron, for recurring runs")
	case !s.At.IsZero() && s.Cron != "":
		return Schedule{}, refuse("give either at or cron, not both: at for one run, cron for recurring runs")
	case s.MaxRuns < 0:
		return Schedule{}, refuse("max_runs is %d: give a positive number of runs, or leave it out for no limit", s.MaxRuns)
	}
	if !s.End.IsZero() {
		s.End = s.End.In(loc).Truncate(time.Second)
	}
	if !s.At.IsZero() {
		s.At = s.At.In(loc).Truncate(time.Second)
		if !s.End.IsZero() && s.At.After(s.End) {
			return Schedule{}, refuse("the time %s is after the end %s: give a time before the end, or no end", show(s.At), show(s.End))
		}
		s.MaxRuns = 0 // one run is all a one-shot makes
		return s, nil
	}
	if strings.HasPrefix(s.Cron, "@") || strings.Contains(s.Cron, "TZ=") {
		return Schedule{}, refuse("cron %q is not five fields: write minute hour day-of-month month day-of-week, such as \"0 9 * * MON\", and give the zone in time_zone", s.Cron)
	}
	if f := strings.Fields(s.Cron); len(f) == 5 && restricted(f[2]) && restricted(f[4]) {
		return Schedule{}, refuse("cron %q names both a day of month and a day of week, which cron implementations read differently (either or both): give one and * for the other", s.Cron)
	}
	spec, err := cronParser.Parse(s.Cron)
	if err != nil {
		return Schedule{}, refuse("cron %q does not parse (%v): write five fields, minute hour day-of-month month day-of-week, such as \"0 9 * * MON\" for Mondays at 9:00", s.Cron, err)
	}
	first := next(spec, loc, now)
	if first.IsZero() {
		return Schedule{}, refuse("cron %q never fires: check the day of month against the month", s.Cron)
	}
	prev := first
	for range minGapFires {
		t := next(spec, loc, prev)
		if t.IsZero() || t.Sub(first) > horizon {
			break
		}
		if gap := t.Sub(prev); gap < minInterval {
			return Schedule{}, refuse("cron %q fires %s apart (at %s and %s); runs may be no closer than %s: choose a schedule that fires less often", s.Cron, gap, show(prev), show(t), minInterval)
		}
		prev = t
	}
	return s, nil
}

// restricted says a day field names some days, not all.
func restricted(field string) bool { return field != "*" && field != "?" }

// Next returns the first fire of s strictly after t, or the zero time when
// there is none (a one-shot already past, or past End). MaxRuns is not
// counted here: see Automation.Fires. Cron fires on the zone's wall clock:
// 09:00 stays 09:00 across a change of daylight saving time. A time the
// clock skips when it springs forward fires as far after the change as it
// was into the gap (02:30 at a 02:00→03:00 change fires at 03:30, once),
// and a time the clock shows twice when it falls back fires once, the
// first time.
func (s Schedule) Next(t time.Time) time.Time {
	var at time.Time
	switch {
	case !s.At.IsZero():
		if s.At.After(t) {
			at = s.At
		}
	case s.Cron != "":
		loc, err := s.location()
		if err != nil {
			return time.Time{}
		}
		spec, err := cronParser.Parse(s.Cron)
		if err != nil {
			return time.Time{}
		}
		at = next(spec, loc, t)
	}
	if at.IsZero() || (!s.End.IsZero() && at.After(s.End)) {
		return time.Time{}
	}
	return at
}

// String is the schedule as a person reads it, such as
// "cron 0 9 * * MON in Europe/Paris".
func (s Schedule) String() string {
	var b strings.Builder
	if s.Cron != "" {
		fmt.Fprintf(&b, "cron %s in %s", s.Cron, s.TimeZone)
	} else {
		fmt.Fprintf(&b, "once at %s", show(s.At))
	}
	if !s.End.IsZero() {
		fmt.Fprintf(&b, ", until %s", show(s.End))
	}
	if s.MaxRuns > 0 {
		fmt.Fprintf(&b, ", at most %d runs", s.MaxRuns)
	}
	return b.String()
}

func (s Schedule) location() (*time.Location, error) {
	name := strings.TrimSpace(s.TimeZone)
	switch {
	case len(name) > maxZone:
		return nil, refuse("time_zone is %d bytes, longer than any zone's name: give the user's IANA time zone, such as Europe/Paris", len(name))
	case name == "":
		return nil, refuse("time_zone is empty: give the user's IANA time zone, such as Europe/Paris or America/New_York")
	case strings.EqualFold(name, "local"):
		return nil, refuse("time_zone %q names no zone: give the user's IANA time zone, such as Europe/Paris", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, refuse("time_zone %q is not a known IANA time zone: give one such as Europe/Paris, America/New_York or UTC", name)
	}
	return loc, nil
}

// next is the first fire of spec in loc strictly after t. The cron fields
// are matched against the wall clock, which is what the UTC reading of a
// wall time gives (UTC has no daylight saving), and each matched wall time
// is then placed in loc by civil; a wall time that lands at or before t
// (the second of two wall times that meet in one instant, or a time of an
// hour the clock showed twice and t is past) is passed over.
func next(spec cron.Schedule, loc *time.Location, t time.Time) time.Time {
	wall := wallClock(t.In(loc))
	for range maxSkips {
		wall = spec.Next(wall)
		if wall.IsZero() {
			return time.Time{}
		}
		if at := civil(wall, loc); at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// wallClock is t's wall clock read as a UTC time.
func wallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// civil is the instant in loc whose wall clock reads wall (given as a UTC
// time): of two, the earlier (the clock falls back); of none, wall shifted
// forward by the gap (the clock springs forward). time.Date leaves both
// choices unspecified, so they are made here.
func civil(wall time.Time, loc *time.Location) time.Time {
	// The offsets in force a day before and a day after: zones change at
	// most once in so short a span.
	_, before := wall.Add(-24 * time.Hour).In(loc).Zone()
	_, after := wall.Add(24 * time.Hour).In(loc).Zone()
	a := wall.Add(-time.Duration(before) * time.Second)
	b := wall.Add(-time.Duration(after) * time.Second)
	okA, okB := wallClock(a.In(loc)).Equal(wall), wallClock(b.In(loc)).Equal(wall)
	switch {
	case okA && okB:
		if b.Before(a) {
			return b.In(loc)
		}
		return a.In(loc)
	case okB:
		return b.In(loc)
	default: // okA, or in a gap: with the offset before it, past the gap
		return a.In(loc)
	}
}

// show is t as the tools show times: RFC 3339 with the zone's offset.
func show(t time.Time) string { return t.Format(time.RFC3339) }
