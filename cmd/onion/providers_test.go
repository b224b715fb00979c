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

// TestRunOnAnthropic runs the agent with -model anthropic/… against
// oniontest's Anthropic wire, with the key and base URL from Anthropic's
// variables alone.
func TestRunOnAnthropic(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("add", `{"text":"pack the books"}`)),
		oniontest.Text("Added: pack the books."),
	)
	got := cli{env: []string{"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + s.AnthropicURL()}}.onion(t, "run", "-model", "anthropic/claude-sonnet-4-5", "-tools", "todo", "Plan my move")
	if got.code != 0 || got.stdout != "Added: pack the books.\n" || !strings.Contains(got.stderr, "← add succeeded") {
		t.Fatalf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Anthropic == nil || !strings.Contains(string(reqs[0].Raw), `"model":"claude-sonnet-4-5"`) {
		t.Fatalf("requests %+v: want two on the Anthropic wire for claude-sonnet-4-5", reqs)
	}
	if reqs[0].Header.Get("X-Api-Key") != "test-key" {
		t.Errorf("the key went as %q", reqs[0].Header.Get("X-Api-Key"))
	}
}
