package oniontest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

// texts is n Text steps.
func texts(n int) []oniontest.Step {
	steps := make([]oniontest.Step, n)
	for i := range steps {
		steps[i] = oniontest.Text(fmt.Sprint("answer ", i+1))
	}
	return steps
}

// TestKeepRequestsLastN: a server asked to keep 3 requests returns the last
// 3, in order, while the steps and reply IDs go on counting every request.
func TestKeepRequestsLastN(t *testing.T) {
	s := oniontest.NewServer(t, texts(10)...).KeepRequests(3)
	client := s.Client()
	for i := 1; i <= 10; i++ {
		resp, err := client.CreateChatCompletion(context.Background(), chat(false, fmt.Sprint("question ", i)))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint("chatcmpl-oniontest-", i); resp.ID != want {
			t.Errorf("request %d: id %q, want %q", i, resp.ID, want)
		}
		if want := fmt.Sprint("answer ", i); resp.Choices[0].Message.Content != want {
			t.Errorf("request %d: answer %q, want %q (the step of request %d)", i, resp.Choices[0].Message.Content, want, i)
		}
		if got, want := len(s.Requests()), min(i, 3); got != want {
			t.Errorf("after %d requests %d kept, want %d", i, got, want)
		}
	}
	var got []string
	for _, r := range s.Requests() {
		got = append(got, r.Body.Messages[0].Content)
	}
	if want := "question 8,question 9,question 10"; strings.Join(got, ",") != want {
		t.Errorf("kept %q, want %q", got, want)
	}
}

// TestKeepRequestsNone: a server asked to keep none returns none, and still
// numbers its requests and serves its steps in order.
func TestKeepRequestsNone(t *testing.T) {
	s := oniontest.NewServer(t, texts(5)...).KeepRequests(0)
	client := s.Client()
	for i := 1; i <= 5; i++ {
		resp, err := client.CreateChatCompletion(context.Background(), chat(false, "q"))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint("chatcmpl-oniontest-", i); resp.ID != want || resp.Choices[0].Message.Content != fmt.Sprint("answer ", i) {
			t.Errorf("request %d: %s %q", i, resp.ID, resp.Choices[0].Message.Content)
		}
	}
	if got := s.Requests(); len(got) != 0 {
		t.Errorf("kept %d requests, want none", len(got))
	}
}

// TestKeepRequestsLater: the bound applies at once to the requests kept so
// far, and a negative bound keeps all again from then on.
func TestKeepRequestsLater(t *testing.T) {
	s := oniontest.NewServer(t, texts(6)...)
	client := s.Client()
	ask := func(q string) {
		t.Helper()
		if _, err := client.CreateChatCompletion(context.Background(), chat(false, q)); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"a", "b", "c", "d"} {
		ask(q)
	}
	s.KeepRequests(2)
	if got := contents(s.Requests()); got != "c,d" {
		t.Errorf("after KeepRequests(2) kept %q, want c,d", got)
	}
	s.KeepRequests(-1)
	ask("e")
	ask("f")
	if got := contents(s.Requests()); got != "c,d,e,f" {
		t.Errorf("after KeepRequests(-1) kept %q, want c,d,e,f", got)
	}
}

// contents joins the first message of each request.
func contents(reqs []oniontest.Request) string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Body.Messages[0].Content)
	}
	return strings.Join(out, ",")
}
