package loop

import "time"

// This file is the wait before a retry: the same on every replay of a
// run, for its tool calls, and the shape the live runtime's model retries
// share.

// backoff is the wait before retry n (from 0) of call id, as Backoff
// gives it, with its jitter drawn from seed, so that it is the same on
// every replay.
func backoff(lo, hi time.Duration, n int, seed uint64, id string) time.Duration {
	return Backoff(lo, hi, n, func(max time.Duration) time.Duration {
		h := seed ^ uint64(n)*0x9e3779b97f4a7c15
		for i := 0; i < len(id); i++ { // FNV-1a over the call's ID
			h = (h ^ uint64(id[i])) * 0x100000001b3
		}
		h ^= h >> 33 // splitmix-style finish
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		return time.Duration(h % uint64(max))
	})
}

// Backoff is the wait before retry n (from 0): exponential from lo, capped
// at hi, with full jitter over its upper half, jitter(max) being a wait in
// [0, max). A lo of 0 waits nothing. The loop's tool retries and the live
// runtime's model retries both wait this long.
func Backoff(lo, hi time.Duration, n int, jitter func(max time.Duration) time.Duration) time.Duration {
	shift := min(n, 30)
	d := lo << shift
	if d > hi || d>>shift != lo { // past the cap, or overflowed
		d = hi
	}
	if d <= 0 {
		return 0
	}
	return d/2 + jitter(d/2+1)
}
