package oniontest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/onionkit/onion/internal/redact"
)

// TestScrubStreamSpread: a key a stream spreads over the events of one
// place in its data is found, its first part replaced by the mark and
// the others by nothing; the values of other places, which join to no
// key, and every byte outside the values changed are kept.
func TestScrubStreamSpread(t *testing.T) {
	const key = "sk-proj-Zq3xV9mT2bLw8RfK4nYp6HcJ1dGs5AeU"
	event := func(content, id string) string {
		return fmt.Sprintf("data: {\"id\":%q, \"choices\":[{\"delta\":{\"content\":%q}}]}\r\n\r\n", id, content)
	}
	body := event("key: "+key[:5], key[:6]) + "event: ping\n\n" + event(key[5:17], "c1") + event(key[17:], "x") + "data: [DONE]\n\n"
	want := event("key: [redacted]", key[:6]) + "event: ping\n\n" + event("", "c1") + event("", "x") + "data: [DONE]\n\n"
	if got := scrubStream(body, redact.New(key)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// BenchmarkScrubStream: 1 and 4 MiB of chat completion stream, a few
// bytes an event, the key spread over some of them, scrubbed as Record
// writes it; the time per byte stays flat.
func BenchmarkScrubStream(b *testing.B) {
	const key = "sk-proj-Zq3xV9mT2bLw8RfK4nYp6HcJ1dGs5AeU"
	red := redact.New(key)
	for _, size := range []int{1 << 20, 4 << 20} {
		var sb strings.Builder
		for sb.Len() < size {
			for _, p := range []string{"It is ", "sunny ", "in Par", "is, ", key[:20], key[20:], ".\n"} {
				d, _ := json.Marshal(p)
				fmt.Fprintf(&sb, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", d)
			}
		}
		rr := recordedResponse{Status: 200, Events: []string{sb.String()}}
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(sb.Len()))
			for b.Loop() {
				scrubResponse(rr, red)
			}
		})
	}
}
