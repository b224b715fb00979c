package loop_test

import (
	"maps"
	"testing"

	"github.com/onionkit/onion/loop"
)

// TestSubRunUsage: a run's breakdown gathers its sub-runs' usage by path,
// taking a sub-run's own breakdown when it has one, and the run's totals
// add them to its own, which the breakdown keeps under its path.
func TestSubRunUsage(t *testing.T) {
	u := func(n int) loop.Usage { return loop.Usage{TotalTokens: n, Requests: 1} }
	by := loop.AddSubRun(nil, "lead/reader", u(10), nil)
	by = loop.AddSubRun(by, "lead/reader", u(5), nil)
	by = loop.AddSubRun(by, "lead/writer", u(100), map[string]loop.Usage{"lead/writer": u(7), "lead/writer/checker": u(93)})
	total, out := loop.WithSubRuns(u(1), by, "lead")
	want := map[string]loop.Usage{
		"lead": u(1), "lead/reader": {TotalTokens: 15, Requests: 2},
		"lead/writer": u(7), "lead/writer/checker": u(93),
	}
	if !maps.Equal(out, want) || total.TotalTokens != 116 || total.Requests != 5 {
		t.Errorf("total %+v, by %+v", total, out)
	}
	if _, ok := by["lead"]; ok {
		t.Error("WithSubRuns changed the breakdown it was given")
	}
	if total, out := loop.WithSubRuns(u(3), nil, "lead"); total != u(3) || out != nil {
		t.Errorf("no sub-runs: %+v %+v", total, out)
	}
	for s, want := range map[loop.StopReason]bool{loop.StopNatural: true, loop.StopMaxIterations: true, loop.StopBudget: true,
		loop.StopCanceled: false, loop.StopFailed: false, loop.StopLength: false} {
		if s.Answered() != want {
			t.Errorf("%s answered: %v", s, !want)
		}
	}
}
