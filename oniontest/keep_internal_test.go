package oniontest

import (
	"bytes"
	"testing"
)

// TestKeepRequestsStaysFlat: however many requests a server bounded to the
// last n receives, it holds fewer than 2n of them, and the slots of those
// dropped hold nothing, so their bodies can be collected; bounded to none,
// it holds none.
func TestKeepRequestsStaysFlat(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 1<<10)
	for _, n := range []int{0, 1, 4, 100} {
		s := newServer(nil)
		s.KeepRequests(n)
		for i := range 10_000 {
			if got := s.keepRequest(Request{Raw: body}); got != i+1 {
				t.Fatalf("keep %d: request %d numbered %d", n, i+1, got)
			}
			if len(s.requests) >= max(2*n, 1) {
				t.Fatalf("keep %d: %d requests held after %d", n, len(s.requests), i+1)
			}
		}
		for i, r := range s.requests[len(s.requests):cap(s.requests)] {
			if r.Raw != nil {
				t.Errorf("keep %d: slot %d past the kept ones still holds a body", n, len(s.requests)+i)
			}
		}
		if got := len(s.kept()); got != n {
			t.Errorf("keep %d: Requests would return %d", n, got)
		}
	}
}
