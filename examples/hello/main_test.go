package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/oniontest"
)

func TestQuickStart(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")

	// main prints to stdout: read it through a pipe.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)

	if got := strings.TrimSpace(string(out)); got != "It is sunny in Paris. <nil>" {
		t.Errorf("printed %q", got)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Body.Tools[0].Function.Name != "weather" {
		t.Fatalf("requests: %+v", reqs)
	}
	last := reqs[1].Body.Messages[len(reqs[1].Body.Messages)-1]
	if last.Role != openai.ChatMessageRoleTool || last.Content != "sunny in Paris" {
		t.Errorf("the tool result sent back: %+v", last)
	}
}
