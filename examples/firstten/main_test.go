package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

// TestFirstTen runs the README's first ten minutes against oniontest: the
// direct call, a run that calls the tool, and a conversation whose second
// turn carries the first.
func TestFirstTen(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
		oniontest.Text("Sunny in Rome."),
		oniontest.Text("Still sunny."),
	)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")

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

	if got, want := string(out), "sunny in Oslo <nil>\nIt is sunny in Paris.\nStill sunny. <nil>\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	msgs := reqs[3].Body.Messages
	var said []string
	for _, m := range msgs {
		said = append(said, m.Content)
	}
	if !strings.Contains(strings.Join(said, "|"), "What's the weather in Rome?|Sunny in Rome.|And the day after?") {
		t.Errorf("the second turn does not carry the first: %q", said)
	}
}
