package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// toolMessages are the tool results sent to the model in its last request.
func toolMessages(t *testing.T, s *oniontest.Server) []string {
	t.Helper()
	reqs := s.Requests()
	var out []string
	for _, m := range reqs[len(reqs)-1].ToolResults() {
		out = append(out, m.Content)
	}
	return out
}

// runWith runs the program against the oniontest server s and, unless
// tracker is nil, an httptest tracker; answer is typed at the terminal.
func runWith(t *testing.T, s *oniontest.Server, tr *tracker, token, answer string) string {
	t.Helper()
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")
	var trackerURL string
	if tr != nil {
		app := httptest.NewServer(tr)
		t.Cleanup(app.Close)
		trackerURL = app.URL
	}
	var out bytes.Buffer
	if err := run(context.Background(), nil, strings.NewReader(answer), &out, trackerURL, token); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestReadAndComment(t *testing.T) {
	tr := newTracker("t0k")
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("ticket_text", `{"ticket_id":"42"}`)),
		oniontest.ToolCalls(oniontest.Call("comment_ticket", `{"ticket_id":"42","text":"Someone is on the way."}`)),
		oniontest.Text("Ticket 42: the printer is on fire; I told the customer."),
	)
	out := runWith(t, s, tr, "t0k", "")
	msgs := toolMessages(t, s)
	if len(msgs) != 2 || !strings.Contains(msgs[0], "The printer on floor 3 is on fire again") || msgs[1] != "comment 1 added" {
		t.Errorf("the model read %q", msgs)
	}
	if got := tr.tickets["42"].Comments; len(got) != 1 || got[0] != "Someone is on the way." {
		t.Errorf("comments = %q", got)
	}
	for _, want := range []string{"> " + defaultPrompt, "Ticket 42: the printer", "call ticket_text(", "call comment_ticket("} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDeleteAsksFirst(t *testing.T) {
	for _, tc := range []struct {
		answer, outcome string
		kept            bool
	}{
		{"n\n", "denied", true},
		{"y\n", "succeeded", false},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			tr := newTracker("t0k")
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("delete_ticket", `{"ticket_id":"43"}`)),
				oniontest.Text("ok"),
			)
			out := runWith(t, s, tr, "t0k", tc.answer)
			if !strings.Contains(out, `call delete_ticket({"ticket_id":"43"}): `+tc.outcome) {
				t.Errorf("output:\n%s", out)
			}
			if _, kept := tr.tickets["43"]; kept != tc.kept {
				t.Errorf("ticket 43 kept = %v, want %v", kept, tc.kept)
			}
		})
	}
}

func TestWrongTokenIsAToolError(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("search_tickets", `{"query":"printer"}`)),
		oniontest.Text("I could not search."),
	)
	runWith(t, s, newTracker("t0k"), "xyzzy-123", "")
	if msgs := toolMessages(t, s); len(msgs) != 1 || !strings.Contains(msgs[0], "status 401") || strings.Contains(msgs[0], "xyzzy") {
		t.Errorf("the model read %q", msgs)
	}
}

func TestDemoTracker(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("search_tickets", `{"query":"vpn"}`)),
		oniontest.Text("Ticket 43 is about the VPN."),
	)
	runWith(t, s, nil, "", "")
	if msgs := toolMessages(t, s); len(msgs) != 1 || msgs[0] != `[{"id":"43","title":"VPN drops"}]` {
		t.Errorf("the model read %q", msgs)
	}
}
