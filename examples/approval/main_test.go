package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

func TestApproval(t *testing.T) {
	const args = `{"name":"groceries","text":"eggs, milk, bread"}`
	tests := []struct {
		name      string
		answer    string // typed at the terminal
		reply     string // the model's final answer
		outcome   string
		saved     string
		toolReply string // part of what the model was told
	}{
		{"denied", "n\n", "I could not save it: saving was refused.", "denied", "save_note ran 0 time(s); notes: []", "denied"},
		{"approved", "y\n", "Saved 'groceries'.", "succeeded", "save_note ran 1 time(s); notes: [groceries]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("save_note", args)),
				oniontest.Text(tt.reply),
			)
			t.Setenv("OPENAI_BASE_URL", s.URL())
			t.Setenv("OPENAI_API_KEY", "test")
			var out bytes.Buffer
			err := run(context.Background(), strings.NewReader(tt.answer), &out)
			if err != nil {
				t.Fatal(err)
			}
			got := out.String()
			for _, want := range []string{
				"wants to run save_note", // the approver showed the call...
				`"groceries"`,            // ...with its arguments
				tt.reply + "\n",          // the answer
				"call save_note(" + args + "): " + tt.outcome + " after",
				tt.saved + "\n",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}

			reqs := s.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			msgs := reqs[1].Body.Messages
			last := msgs[len(msgs)-1]
			if last.Role != openai.ChatMessageRoleTool || last.ToolCallID == "" {
				t.Fatalf("the tool result was not sent back: %+v", last)
			}
			if !strings.Contains(strings.ToLower(last.Content), tt.toolReply) {
				t.Errorf("the model was told %q, want it to mention %q", last.Content, tt.toolReply)
			}
		})
	}
}
