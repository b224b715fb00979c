package devui

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// waitIdle waits until no run of u is in flight.
func waitIdle(t *testing.T, u *UI) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !u.idle() {
		if time.Now().After(deadline) {
			t.Fatal("the runs did not end")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The UI keeps what its limits say: the newest runs, each within its
// bytes (the oldest JSON dropped first), so many conversations, so many
// pages.
func TestLimits(t *testing.T) {
	long := strings.Repeat("You answer briefly. ", 400) // an 8 KB system prompt in every request
	s := oniontest.NewServer(t, oniontest.Text("one"), oniontest.Text("two"), oniontest.Text("three"))
	agent, err := onion.NewAgent("a", onion.BaseURL(s.URL()), onion.APIKey("test"), onion.SystemPrompt(long))
	if err != nil {
		t.Fatal(err)
	}
	u, base := serveUI(t, []*onion.Agent{agent}, WithLimits(Limits{Runs: 2, RunBytes: 6 << 10, Conversations: 1, Pages: 1}))
	code, conv := post(t, u, base, "/api/conversations", map[string]int{"agent": 0})
	if code != 200 {
		t.Fatalf("%d %v", code, conv)
	}
	if code, out := post(t, u, base, "/api/conversations", map[string]int{"agent": 0}); code != http.StatusTooManyRequests || !strings.Contains(out["error"].(string), "delete one first") {
		t.Errorf("a second conversation: %d %v", code, out)
	}
	id := conv["id"].(string)
	for _, prompt := range []string{"1", "2", "3"} {
		if code, out := post(t, u, base, "/api/conversations/"+id+"/prompt", map[string]string{"prompt": prompt}); code != 200 {
			t.Fatalf("prompt %s: %d %v", prompt, code, out)
		}
		waitIdle(t, u)
	}
	u.mu.Lock()
	var kept []string
	for _, r := range u.runs {
		kept = append(kept, r.Prompt+":"+r.Output)
		if r.bytes > u.set.limits.RunBytes {
			t.Errorf("run %s keeps %d bytes, more than %d", r.ID, r.bytes, u.set.limits.RunBytes)
		}
		if st := r.steps[0]; st.JSON != "dropped" || st.request != nil {
			t.Errorf("run %s kept its request's JSON past its bound: %s", r.ID, st.JSON)
		}
	}
	u.mu.Unlock()
	if strings.Join(kept, " ") != "2:two 3:three" {
		t.Errorf("kept %v, want the newest two", kept)
	}

	// One page may watch; a second is refused.
	first, err := http.Get(base + "/api/events?token=" + u.token)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	second, err := http.Get(base + "/api/events?token=" + u.token)
	if err != nil {
		t.Fatal(err)
	}
	second.Body.Close()
	if first.StatusCode != 200 || second.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("two pages: %d, %d", first.StatusCode, second.StatusCode)
	}
}

// A page that does not read its events is not waited for: past its
// queue's bounds the queue is dropped, and a snapshot is due instead.
func TestSlowPageGetsSnapshot(t *testing.T) {
	u, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	c := &client{wake: make(chan struct{}, 1), done: make(chan struct{})}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clients = append(u.clients, c)
	for i := range maxQueued + 10 {
		u.publish("run_removed", i)
	}
	// Those after the bound are in the snapshot too: none is queued.
	if !c.resync || len(c.queue) != 0 || c.dropped != maxQueued+10 {
		t.Errorf("resync %v, queued %d, dropped %d", c.resync, len(c.queue), c.dropped)
	}
	// The text of one reply joins into one event.
	c.queue, c.resync = nil, false
	for range 100 {
		u.publishText("r1", 1, "word ")
	}
	if len(c.queue) != 1 || c.queue[0].text != strings.Repeat("word ", 100) {
		t.Errorf("the text queued: %d events", len(c.queue))
	}
}
