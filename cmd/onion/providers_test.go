package main

import (
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

// TestRunOnGemini runs the agent with -model gemini/… against oniontest's
// Gemini wire: the provider is registered by the command, reads its own
// key and base URL, and no OpenAI setting is needed.
func TestRunOnGemini(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("add", `{"text":"book the van"}`)),
		oniontest.Text("Added: book the van."),
	)
	got := cli{env: []string{"GEMINI_API_KEY=test-key", "GEMINI_BASE_URL=" + s.GeminiURL()}}.onion(t, "run", "-model", "gemini/gemini-2.5-flash", "-tools", "todo", "Plan my move")
	if got.code != 0 || got.stdout != "Added: book the van.\n" || !strings.Contains(got.stderr, "← add succeeded") {
		t.Fatalf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Gemini == nil || reqs[0].Gemini.Model != "gemini-2.5-flash" {
		t.Fatalf("requests %+v: want two on the Gemini wire for gemini-2.5-flash", reqs)
	}
	if strings.Contains(string(reqs[0].Raw), "test-key") {
		t.Error("the key is in the body")
	}
}
