package anthropic_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/oniontest"
)

// marker matches a cache breakpoint as the package writes it.
var marker = regexp.MustCompile(`,"cache_control":\{"type":"ephemeral"(,"ttl":"1h")?\}`)

// toolRun runs an agent through rounds tool calls, capped at cap
// iterations, and returns the requests' bodies.
func toolRun(t *testing.T, stream bool, rounds, cap int, opts ...anthropic.Option) [][]byte {
	t.Helper()
	var steps []oniontest.Step
	for i := range rounds {
		city := []string{"Paris", "Rome", "Oslo", "Lima", "Kyiv", "Pune"}[i%6]
		steps = append(steps, oniontest.ToolCalls(oniontest.Call("weather", `{"city":"`+city+`"}`),
			oniontest.Call("weather", `{"city":"Bern"}`)).WithThinking("Round "+city+"."))
	}
	steps = append(steps, oniontest.Text("Done."))
	s := oniontest.NewServer(t, steps...)
	a := newAgent(t, s, newModel(t, s, opts...), Weather, onion.SystemPrompt("Be brief."), onion.MaxIterations(cap))
	run(t, a, stream, "Weather everywhere?")
	var bodies [][]byte
	for _, r := range s.Requests() {
		bodies = append(bodies, r.Raw)
	}
	return bodies
}

// TestPrefixStable: each request of a run, its breakpoints left out, is
// the request before it up to the end of its messages, byte for byte, and
// more: tools, system prompt and earlier turns are never written again
// otherwise, the last request of a capped run included.
func TestPrefixStable(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			bodies := toolRun(t, mode.stream, 4, 3, anthropic.Thinking(1024))
			if len(bodies) != 4 {
				t.Fatalf("%d requests, want 4 (three rounds, then the last without calls)", len(bodies))
			}
			for n := 0; n+1 < len(bodies); n++ {
				prev := marker.ReplaceAll(bodies[n], nil)
				next := marker.ReplaceAll(bodies[n+1], nil)
				prev = bytes.TrimSuffix(prev, []byte("]}")) // the end of the messages and of the body
				if !bytes.HasPrefix(next, prev) {
					i := commonPrefix(prev, next)
					t.Errorf("request %d is not request %d and more: they part at byte %d of %d:\n%.120s\n%.120s", n+1, n, i, len(prev), prev[i:], next[i:])
				}
			}
			last := string(bodies[len(bodies)-1])
			if !strings.HasSuffix(last, `],"tool_choice":{"type":"none"}}`) || !strings.Contains(last, `"tools":[{"name":"weather"`) {
				t.Errorf("the last request does not keep the tools and forbid calls: %.200s", last[max(len(last)-200, 0):])
			}
		})
	}
}

func commonPrefix(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// TestBreakpoints: four breakpoints at most, on the last tool, the system
// prompt, the newest turn and the turn the request before ended with; the
// TTL as set; none with NoCache.
func TestBreakpoints(t *testing.T) {
	bodies := toolRun(t, false, 3, 10)
	for n, b := range bodies {
		marks := marker.FindAllIndex(b, -1)
		want := 4
		if n == 0 {
			want = 3 // tools, system, prompt
		}
		if len(marks) != want {
			t.Errorf("request %d: %d breakpoints, want %d", n, len(marks), want)
		}
	}
	// The third request: the tool, the system prompt, the second round's
	// results (where the request before marked its newest turn) and the
	// third's.
	third := string(bodies[2])
	if !strings.Contains(third, `"required":["city"]},"cache_control":{"type":"ephemeral"}}],"system":`) {
		t.Error("request 3: the last tool has no breakpoint")
	}
	if !regexp.MustCompile(`"system":\[\{"type":"text","text":"Be brief\.[^"]*","cache_control":\{"type":"ephemeral"\}\}\],"messages"`).MatchString(third) {
		t.Error("request 3: the system prompt has no breakpoint")
	}
	msgs := regexp.MustCompile(`\{"role":"(user|assistant)"`).FindAllStringIndex(third, -1)
	if len(msgs) != 5 {
		t.Fatalf("request 3 has %d messages", len(msgs))
	}
	for i, m := range msgs {
		end := len(third)
		if i+1 < len(msgs) {
			end = msgs[i+1][0]
		}
		marked := marker.MatchString(third[m[0]:end])
		if want := i == 2 || i == 4; marked != want {
			t.Errorf("request 3, message %d: marked %v, want %v", i, marked, want)
		}
	}

	for _, b := range toolRun(t, false, 2, 10, anthropic.CacheTTL(time.Hour)) {
		if n, m := bytes.Count(b, []byte(`"cache_control"`)), bytes.Count(b, []byte(`"ttl":"1h"`)); n == 0 || n != m {
			t.Errorf("with CacheTTL(1h): %d breakpoints, %d of an hour", n, m)
		}
	}
	for _, b := range toolRun(t, false, 2, 10, anthropic.NoCache()) {
		if bytes.Contains(b, []byte("cache_control")) {
			t.Errorf("with NoCache: %s", b)
		}
	}
}
