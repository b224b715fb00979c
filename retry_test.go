package onion

import (
	"math"
	"testing"
	"time"

	"github.com/onionkit/onion/loop"
)

// TestBackoffFromZero: RetryBackoff(0, max) waits nothing, where it used to
// wait close to max on every retry.
func TestBackoffFromZero(t *testing.T) {
	upper := func(d time.Duration) time.Duration { return d - 1 } // the largest jitter
	for n := range 40 {
		if d := loop.Backoff(0, 20*time.Second, n, upper); d != 0 {
			t.Fatalf("retry %d of RetryBackoff(0, 20s) waits %v, want 0", n, d)
		}
	}
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	none := func(time.Duration) time.Duration { return 0 }
	lo, hi := 500*time.Millisecond, 20*time.Second
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second}
	for n, w := range want {
		if d := loop.Backoff(lo, hi, n, none); d != w {
			t.Errorf("retry %d waits at least %v, want %v", n, d, w)
		}
	}
	// Far past the cap, the shift must not wrap around to a small wait.
	for _, n := range []int{40, 63, 64, 1000} {
		if d := loop.Backoff(lo, hi, n, none); d != hi/2 {
			t.Errorf("retry %d waits at least %v, want %v", n, d, hi/2)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"2", 2 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{"86400", 24 * time.Hour},
		{"9e9", 9e9 * time.Second},
		{"9e99", math.MaxInt64},
		{"-3", 0},
		{"soon", 0},
		{"Wed, 01 Dec 2100 00:00:00 GMT", time.Date(2100, 12, 1, 0, 0, 0, 0, time.UTC).Sub(now)},
		{"Mon, 30 Nov 2026 00:00:00 GMT", 0},
	} {
		if got := loop.ParseRetryAfter(tc.header, now); got != tc.want {
			t.Errorf("Retry-After %q = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// TestNoBackoff: RetryBackoff(0, 0) retries a read at once.
func TestNoBackoff(t *testing.T) {
	a, err := NewAgent("b", RetryBackoff(0, 0), APIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	if c := a.core.Config(); c.BackoffMin != 0 || c.BackoffMax != 0 {
		t.Errorf("the loop waits %v to %v", c.BackoffMin, c.BackoffMax)
	}
}
