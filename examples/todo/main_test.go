package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

func TestTwoTurnsShareTheList(t *testing.T) {
	s := oniontest.NewServer(t,
		// Turn 1: add three tasks, then answer.
		oniontest.ToolCalls(
			oniontest.Call("add", `{"text":"book the flight"}`),
			oniontest.Call("add", `{"text":"book a hotel"}`),
			oniontest.Call("add", `{"text":"pack"}`),
		),
		oniontest.Text("Added three tasks."),
		// Turn 2: complete the flight, look at the list, answer.
		oniontest.ToolCalls(oniontest.Call("complete", `{"id":1}`)),
		oniontest.ToolCalls(oniontest.Call("list", `{}`)),
		oniontest.Text("Left: book a hotel, pack."),
	)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}

	want := "> " + turns[0] + "\nAdded three tasks.\n\n" +
		"> " + turns[1] + "\nLeft: book a hotel, pack.\n\n" +
		"The list now:\n[x] 1. book the flight\n[ ] 2. book a hotel\n[ ] 3. pack\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}

	reqs := s.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	var names []string
	for _, tool := range reqs[0].Body.Tools {
		names = append(names, tool.Function.Name)
	}
	if got := strings.Join(names, ","); got != "add,complete,list" {
		t.Errorf("tools = %s, want add,complete,list", got)
	}

	// The second turn's first request carries the first turn's prompt and
	// answer before its own prompt.
	var convo []string
	for _, m := range reqs[2].Body.Messages {
		if m.Role == openai.ChatMessageRoleUser || m.Role == openai.ChatMessageRoleAssistant {
			convo = append(convo, m.Role+": "+m.Content)
		}
	}
	wantConvo := []string{"user: " + turns[0], "assistant: Added three tasks.", "user: " + turns[1]}
	if strings.Join(convo, "\n") != strings.Join(wantConvo, "\n") {
		t.Errorf("second turn sent:\n%s\nwant:\n%s", strings.Join(convo, "\n"), strings.Join(wantConvo, "\n"))
	}

	// list, in the second turn, saw the items the first turn added.
	msgs := reqs[4].Body.Messages
	last := msgs[len(msgs)-1]
	if last.Role != openai.ChatMessageRoleTool ||
		!strings.Contains(last.Content, `{"id":1,"text":"book the flight","done":true}`) ||
		!strings.Contains(last.Content, `"pack"`) {
		t.Errorf("list result sent = %+v", last)
	}
}

func TestNoModel(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	err := run(context.Background(), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("err = %v, want one naming OPENAI_API_KEY", err)
	}
}
