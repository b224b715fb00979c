package onion_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// echo answers each request with the text of its last user message and
// the number of messages it carried.
func echo(r oniontest.Request) oniontest.Step {
	msgs := r.Body.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return oniontest.Text(fmt.Sprintf("re %s", msgs[i].Content))
		}
	}
	return oniontest.Text("no prompt")
}

// TestConversationsNeverSeeEachOther: eight conversations on one shared
// agent, three turns each, run at once: every request carries its own
// conversation's earlier turns and nothing of the others'.
func TestConversationsNeverSeeEachOther(t *testing.T) {
	const convs, turns = 8, 3
	s := oniontest.NewServer(t)
	for range convs * turns {
		s.Add(oniontest.Func(echo))
	}
	a := newAgent(t, s)
	var wg sync.WaitGroup
	for c := range convs {
		wg.Go(func() {
			conv := a.NewConversation()
			for turn := range turns {
				prompt := fmt.Sprintf("c%d-t%d", c, turn)
				out, err := conv.Input(context.Background(), prompt)
				if err != nil {
					t.Error(err)
					return
				}
				if out != "re "+prompt {
					t.Errorf("%s answered %q", prompt, out)
				}
			}
			if n := len(conv.History()); n != 2*turns {
				t.Errorf("conversation %d kept %d messages, want %d", c, n, 2*turns)
			}
		})
	}
	wg.Wait()
	reqs := s.Requests()
	if len(reqs) != convs*turns {
		t.Fatalf("%d requests, want %d", len(reqs), convs*turns)
	}
	for i, r := range reqs {
		msgs := r.Body.Messages
		last := msgs[len(msgs)-1].Content
		conv, _, _ := strings.Cut(last, "-")
		var turn int
		if _, err := fmt.Sscanf(last, conv+"-t%d", &turn); err != nil {
			t.Fatalf("request %d: last message %q", i, last)
		}
		var want []string
		for k := range turn {
			p := fmt.Sprintf("%s-t%d", conv, k)
			want = append(want, "user: "+p, "assistant: re "+p)
		}
		want = append(want, "user: "+last)
		var got []string
		for _, m := range msgs {
			if m.Role != "system" {
				got = append(got, m.Role+": "+m.Content)
			}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("request %d sent\n%q\nwant\n%q", i, got, want)
		}
	}
}

// TestAgentRunsHaveNoHistory: Run, Input and Stream on the agent itself
// each send only the system prompt and their own prompt.
func TestAgentRunsHaveNoHistory(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Func(echo), oniontest.Func(echo), oniontest.Func(echo))
	a := newAgent(t, s)
	ctx := context.Background()
	if _, err := a.Run(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Input(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	for _, err := range a.Stream(ctx, "three") {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range s.Requests() {
		var users []string
		for _, m := range r.Body.Messages {
			if m.Role != "system" {
				users = append(users, m.Content)
			}
		}
		if len(users) != 1 {
			t.Errorf("request %d carried %q, want its prompt alone", i, users)
		}
	}
}

// TestConversationStreamKeepsTheTurn: a Stream that runs to its end keeps
// its turn, there by the time EventDone is yielded; a Stream left early,
// and a run that fails, keep nothing.
func TestConversationStreamKeepsTheTurn(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("first"), oniontest.Error(400, `{"error":{"message":"bad"}}`), oniontest.Text("second"))
	conv := newAgent(t, s).NewConversation()
	ctx := context.Background()
	for e, err := range conv.Stream(ctx, "q1") {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == onion.EventDone && len(conv.History()) != 2 {
			t.Errorf("at EventDone the history has %d messages, want 2", len(conv.History()))
		}
	}
	if _, err := conv.Run(ctx, "q2"); err == nil {
		t.Fatal("a 400 ended without error")
	}
	for range conv.Stream(ctx, "q3") {
		break
	}
	h := conv.History()
	if len(h) != 2 || h[0].Content != "q1" || h[1].Content != "first" {
		t.Errorf("history %+v, want q1 and its answer alone", h)
	}
}

// TestConversationJSON: a Conversation encodes as its messages, inside a
// larger value too, and decodes into a conversation made by the agent; a
// zero Conversation, which has no agent, refuses to decode.
func TestConversationJSON(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("hello"), oniontest.Func(echo))
	a := newAgent(t, s)
	type session struct {
		User string              `json:"user"`
		Conv *onion.Conversation `json:"conversation"`
	}
	saved := session{User: "ann", Conv: a.NewConversation()}
	if _, err := saved.Conv.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"user":"ann","conversation":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`; string(data) != want {
		t.Errorf("encoded %s\nwant %s", data, want)
	}
	restored := session{Conv: a.NewConversation()}
	if err := json.Unmarshal(data, &restored); err != nil {
		t.Fatal(err)
	}
	if _, err := restored.Conv.Run(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()[1].Body.Messages); n != 4 { // system, hi, hello, again
		t.Errorf("the restored conversation sent %d messages, want 4", n)
	}
	var zero session
	if err := json.Unmarshal(data, &zero); err == nil || !strings.Contains(err.Error(), "NewConversation") {
		t.Errorf("a zero Conversation decoded: err = %v", err)
	}
}

// TestConversationAdd: a run carried out elsewhere adds what Run would
// have added: the prompt and the answer, or every message with
// KeepToolHistory; messages that do not start with a prompt are refused.
func TestConversationAdd(t *testing.T) {
	run := []onion.Message{
		{Role: onion.RoleUser, Content: "q"},
		{Role: onion.RoleAssistant, ToolCalls: []onion.ToolRequest{{ID: "c1", Name: "lookup", Arguments: `{}`}}},
		{Role: onion.RoleTool, ToolCallID: "c1", Content: "v"},
		{Role: onion.RoleAssistant, Content: "the answer"},
	}
	s := oniontest.NewServer(t)
	plain := newAgent(t, s).NewConversation()
	if err := plain.Add(run); err != nil {
		t.Fatal(err)
	}
	if h := plain.History(); len(h) != 2 || h[0].Content != "q" || h[1].Content != "the answer" {
		t.Errorf("added %+v, want the prompt and the answer", h)
	}
	full := newAgent(t, s, onion.KeepToolHistory()).NewConversation()
	if err := full.Add(run); err != nil {
		t.Fatal(err)
	}
	if h := full.History(); len(h) != 4 {
		t.Errorf("with KeepToolHistory added %d messages, want 4", len(h))
	}
	for _, bad := range [][]onion.Message{nil, run[1:], {{Role: onion.RoleUser}, {Role: "wizard"}}} {
		if err := plain.Add(bad); err == nil {
			t.Errorf("Add(%+v) passed", bad)
		}
	}
	if n := len(plain.History()); n != 2 {
		t.Errorf("refused runs changed the history: %d messages", n)
	}
}
