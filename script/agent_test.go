package script_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

// lastToolMessage is the last tool message the model was sent.
func lastToolMessage(t *testing.T, s *oniontest.Server) openai.ChatCompletionMessage {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	results := reqs[len(reqs)-1].ToolResults()
	if len(results) == 0 {
		t.Fatalf("no tool message in the last request: %+v", reqs[len(reqs)-1].Body.Messages)
	}
	return results[len(results)-1]
}

func TestTicketInAgentLoop(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, ticketsStar)
	for _, tc := range []struct {
		name, args, want string
	}{
		{"found", `{"ticket_id":"42"}`, `{"text":"The printer on floor 3 is on fire."}`},
		{"not found", `{"ticket_id":"7"}`, "no such ticket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("ticket_text", tc.args)),
				oniontest.Text("done"))
			agent, err := onion.NewAgent("support", tools["ticket_text"], onion.BaseURL(s.URL()), onion.APIKey("k"), onion.MaxIterations(3))
			if err != nil {
				t.Fatal(err)
			}
			defer agent.Close()
			answer, err := agent.Input(context.Background(), "What does the ticket say?")
			if err != nil || answer != "done" {
				t.Fatalf("Input = %q, %v", answer, err)
			}
			if got := lastToolMessage(t, s).Content; !strings.Contains(got, tc.want) {
				t.Errorf("the model read %q, want it to contain %q", got, tc.want)
			}
			// The tool is declared read in its docstring, and the model sees it.
			def := s.Requests()[0].Body.Tools[0].Function
			if def.Name != "ticket_text" || def.Description != "The readable text of a ticket." {
				t.Errorf("tool definition = %+v", def)
			}
		})
	}
	for _, h := range a.seen() {
		if h.Auth != token {
			t.Errorf("%s %s reached the app with Authorization %q", h.Method, h.Path, h.Auth)
		}
	}
}

func TestWriteThatFailsAfterPostIsOutcomeUnknown(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def close_ticket(ticket_id):
    """Close a ticket.

    onion:intent write
    """
    request("POST", "/echo", json={"close": ticket_id})
    ok(request("GET", "/fail"))
`)
	_, err := call(t, tools, "close_ticket", `{"ticket_id":"42"}`)
	if !errors.Is(err, onion.ErrOutcomeUnknown) {
		t.Errorf("err = %v, want it to wrap onion.ErrOutcomeUnknown", err)
	}
	if err == nil || !strings.Contains(err.Error(), "status 503") || !strings.Contains(err.Error(), "the database is down") {
		t.Errorf("err = %v, want the status and body of the failed request", err)
	}

	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("close_ticket", `{"ticket_id":"42"}`)),
		oniontest.Text("done"))
	agent, err := onion.NewAgent("support", tools["close_ticket"], onion.BaseURL(s.URL()), onion.APIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), "close 42")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ToolCalls[0].Outcome; got != onion.OutcomeUnknown {
		t.Errorf("outcome = %s, want %s", got, onion.OutcomeUnknown)
	}
}
