package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
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

	if got := string(out); got != "It is sunny in Paris.\n" {
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

// TestNoModel runs the program with no model configured, as a process of
// its own since it exits: it must fail with the hint, before any request.
func TestNoModel(t *testing.T) {
	if os.Getenv("HELLO_RUN_MAIN") == "1" {
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoModel$")
	cmd.Env = append(os.Environ(), "HELLO_RUN_MAIN=1", "OPENAI_API_KEY=", "OPENAI_BASE_URL=",
		"HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1") // no request can get out
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Errorf("exit: %v, want a non-zero status", err)
	}
	if got := stderr.String(); !strings.Contains(got, "no model configured: set OPENAI_API_KEY") || !strings.Contains(got, "OPENAI_BASE_URL") {
		t.Errorf("stderr = %q, want the hint naming OPENAI_API_KEY and OPENAI_BASE_URL", got)
	}
	if strings.Contains(stdout.String()+stderr.String(), "<nil>") || strings.Contains(stderr.String(), "no such host") {
		t.Errorf("stdout = %q, stderr = %q", stdout.String(), stderr.String())
	}
}
