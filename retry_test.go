package onion

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/loop"
	"github.com/sashabaranov/go-openai"
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

// TestToolCallAssemblyIsLinear feeds the arguments of one call in 4-byte
// fragments, as a stream does, at two sizes: the bytes allocated must
// grow with the size, not with its square (string += made 1 MiB take 16 s).
func TestToolCallAssemblyIsLinear(t *testing.T) {
	allocated := func(size int) uint64 {
		var asm toolCallAssembler
		i := 0
		first := openai.ToolCall{Index: &i, ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "save"}}
		frag := openai.ToolCall{Index: &i, Function: openai.FunctionCall{Arguments: "abcd"}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		asm.add(first)
		for range size / 4 {
			asm.add(frag)
		}
		calls := asm.calls()
		runtime.ReadMemStats(&after)
		if len(calls) != 1 || len(calls[0].Arguments) != size || !strings.HasPrefix(calls[0].Arguments, "abcdabcd") {
			t.Fatalf("assembled %d calls, %d bytes of arguments", len(calls), len(calls[0].Arguments))
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(256<<10), allocated(1<<20)
	// Linear: about 4× for 4× the size. Quadratic would be about 16×.
	if ratio := float64(large) / float64(small); ratio > 8 {
		t.Errorf("assembling 1 MiB allocated %d bytes, %.1f× what 256 KiB did (%d): not linear", large, ratio, small)
	}
	if large > 8<<20 {
		t.Errorf("assembling 1 MiB of arguments allocated %d bytes", large)
	}
}

// TestNoBackoff: RetryBackoff(0, 0) retries a read at once.
func TestNoBackoff(t *testing.T) {
	a, err := NewAgent("b", RetryBackoff(0, 0), APIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	if c := a.Loop().Config(); c.BackoffMin != 0 || c.BackoffMax != 0 {
		t.Errorf("the loop waits %v to %v", c.BackoffMin, c.BackoffMax)
	}
}
