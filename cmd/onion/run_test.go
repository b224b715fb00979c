package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// TestRunToolRoundTrip runs the agent on a prompt that makes the model
// call a tool: stdout holds only the answer, stderr the call as it started
// and finished, and the model reads the tool's result.
func TestRunToolRoundTrip(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("add", `{"text": "buy milk"}`)),
		oniontest.Text("I added buy milk to your list."),
	)
	got := cli{env: model(s.URL())}.onion(t, "run", "-tools", "todo", "Remind me to buy milk")
	if got.code != 0 {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	if got.stdout != "I added buy milk to your list.\n" {
		t.Errorf("stdout %q, want only the answer", got.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n")
	if len(lines) != 2 || lines[0] != `→ add {"text":"buy milk"}` || !strings.HasPrefix(lines[1], "← add succeeded in ") {
		t.Errorf("stderr %q, want the call's start and finish lines", got.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if first := reqs[0].Body.Messages; first[len(first)-1].Content != "Remind me to buy milk" || len(reqs[0].Body.Tools) != 4 {
		t.Errorf("first request: messages %+v, %d tools; want the prompt and the 4 todo tools", first, len(reqs[0].Body.Tools))
	}
	if res := reqs[1].ToolResults(); len(res) != 1 || res[0].Content != `{"id":1,"text":"buy milk","done":false}` {
		t.Errorf("tool results sent back: %+v", res)
	}
	if h := reqs[0].Header.Get("Authorization"); h != "Bearer" && h != "Bearer " && h != "" {
		t.Errorf("Authorization %q: no key was set, none may be sent", h)
	}
}

// TestRunJSON prints the Result, and nothing else, on stdout.
func TestRunJSON(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("list", `{}`)),
		oniontest.Text("Your list is empty."),
	)
	got := cli{env: model(s.URL())}.onion(t, "run", "-tools", "todo", "-json", "What is on my list?")
	if got.code != 0 {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	var res onion.Result // still decodes into the Result
	if err := json.Unmarshal([]byte(got.stdout), &res); err != nil {
		t.Fatalf("stdout is not a Result: %v\n%s", err, got.stdout)
	}
	if res.Output != "Your list is empty." || res.StopReason != onion.StopNatural || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded || res.ToolCalls[0].Output != "[]" || res.ToolCalls[0].Duration <= 0 {
		t.Errorf("result %+v", res)
	}
	// Durations are for people: "1.2ms", not 1200000.
	var raw struct {
		ToolCalls []struct {
			Duration string `json:"duration"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(got.stdout), &raw); err != nil || len(raw.ToolCalls) != 1 {
		t.Fatalf("durations not strings: %v\n%s", err, got.stdout)
	}
	if d, err := time.ParseDuration(raw.ToolCalls[0].Duration); err != nil || d != res.ToolCalls[0].Duration {
		t.Errorf("duration %q: %v; want a Go duration such as 1.2ms\n%s", raw.ToolCalls[0].Duration, err, got.stdout)
	}
}

// TestFinishedLeavesOutTheApprovalWait: "succeeded in" is the tool's own
// time; the wait for approval is said apart, and a denial took the wait.
func TestFinishedLeavesOutTheApprovalWait(t *testing.T) {
	for _, tc := range []struct {
		call onion.ToolCall
		want string
	}{
		{onion.ToolCall{Name: "delete_file", Outcome: onion.Succeeded, Duration: 2060 * time.Millisecond, ApprovalWait: 2 * time.Second}, "← delete_file succeeded in 60ms (after 2s waiting for approval)\n"},
		{onion.ToolCall{Name: "delete_file", Outcome: onion.Denied, Duration: 3 * time.Second, ApprovalWait: 3 * time.Second}, "← delete_file denied in 3s\n"},
		{onion.ToolCall{Name: "list", Outcome: onion.Succeeded, Duration: 5 * time.Millisecond}, "← list succeeded in 5ms\n"},
	} {
		var b strings.Builder
		s := &status{w: &b}
		s.finished(&tc.call)
		if b.String() != tc.want {
			t.Errorf("finished(%+v) = %q, want %q", tc.call, b.String(), tc.want)
		}
	}
}

// TestRunNoModel checks that run and chat, with no model configured, say
// what to set and exit 2, before any tool source starts.
func TestRunNoModel(t *testing.T) {
	for _, args := range [][]string{{"run", "-tools", "todo", "hello"}, {"chat", "-tools", "todo"}} {
		got := cli{}.onion(t, args...)
		if got.code != 2 || !strings.Contains(got.stderr, "no model configured: set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL for a local OpenAI-compatible server") || got.stdout != "" {
			t.Errorf("onion %q: exit %d, stdout %q, stderr %q; want 2 and the hint", args, got.code, got.stdout, got.stderr)
		}
	}
}

// TestRunApproval runs a call that needs approval with stdin a pipe: it is
// denied, whatever the pipe holds, unless -approve names the tool.
func TestRunApproval(t *testing.T) {
	t.Run("DeniedOnAPipe", func(t *testing.T) {
		dir := t.TempDir()
		s := oniontest.NewServer(t,
			oniontest.ToolCalls(oniontest.Call("run_command", `{"command":"touch made"}`)),
			oniontest.Text("I could not run it."),
		)
		got := cli{env: model(s.URL()), dir: dir, stdin: "y\n"}.onion(t, "run", "-tools", "shell", "Make a file")
		if got.code != 0 || got.stdout != "I could not run it.\n" {
			t.Errorf("exit %d, stdout %q", got.code, got.stdout)
		}
		if !strings.Contains(got.stderr, "← run_command denied in ") || !strings.Contains(got.stderr, "allow it with -approve run_command") {
			t.Errorf("stderr %q, want the denial and how to allow it", got.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
			t.Error("the denied command ran")
		}
		if res := s.Requests()[1].ToolResults(); len(res) != 1 || res[0].Content != onion.DeniedText {
			t.Errorf("the model read %+v, want the denial", res)
		}
	})
	t.Run("Approve", func(t *testing.T) {
		dir := t.TempDir()
		s := oniontest.NewServer(t,
			oniontest.ToolCalls(oniontest.Call("run_command", `{"command":"touch made"}`)),
			oniontest.Text("Done."),
		)
		got := cli{env: model(s.URL()), dir: dir}.onion(t, "run", "-tools", "shell,todo", "-approve", "run_command", "Make a file")
		if got.code != 0 || got.stdout != "Done.\n" || !strings.Contains(got.stderr, "← run_command succeeded in ") {
			t.Errorf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "made")); err != nil {
			t.Errorf("the approved command did not run: %v", err)
		}
	})
	t.Run("UnknownTool", func(t *testing.T) {
		s := oniontest.NewServer(t)
		got := cli{env: model(s.URL())}.onion(t, "run", "-tools", "todo", "-approve", "run_comand", "hi")
		if got.code != 2 || !strings.Contains(got.stderr, "-approve names no tool run_comand") {
			t.Errorf("exit %d, stderr %q; want 2 and the unknown name", got.code, got.stderr)
		}
	})
}

// TestRunSession runs twice with one -session file: the second run's
// request carries the first run's prompt and answer.
func TestRunSession(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.Text("Hello, Ann."),
		oniontest.Text("Your name is Ann."),
	)
	dir := t.TempDir()
	r := cli{env: model(s.URL()), dir: dir}
	if got := r.onion(t, "run", "-session", "chat.json", "My name is Ann."); got.code != 0 || got.stdout != "Hello, Ann.\n" {
		t.Fatalf("first run: exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	if got := r.onion(t, "run", "-session", "chat.json", "What is my name?"); got.code != 0 || got.stdout != "Your name is Ann.\n" {
		t.Fatalf("second run: exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	var msgs []string
	for _, m := range s.Requests()[1].Body.Messages {
		if m.Role != openai.ChatMessageRoleSystem {
			msgs = append(msgs, m.Role+": "+m.Content)
		}
	}
	if want := []string{"user: My name is Ann.", "assistant: Hello, Ann.", "user: What is my name?"}; strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("second request's conversation %q, want %q", msgs, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, "chat.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved []onion.Message
	if err := json.Unmarshal(data, &saved); err != nil || len(saved) != 4 {
		t.Errorf("session file holds %d messages (%v), want both turns:\n%s", len(saved), err, data)
	}
}

// slowScript is a write tool whose request hangs until the call is cut.
const slowScript = `def save_order(item):
    """Saves an order in the shop.

    item: what is ordered
    """
    return ok(request("POST", "/orders", body={"item": item}))
`

// TestRunInterrupt sends SIGINT while a write is in flight: the run ends at
// once, the write outcome_unknown, and the command exits 130.
func TestRunInterrupt(t *testing.T) {
	arrived := make(chan struct{})
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server sees the client go
		close(arrived)
		<-r.Context().Done() // until the call is cut
	}))
	defer shop.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shop.star"), []byte(slowScript), 0o644); err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("save_order", `{"item":"tea"}`)))
	cmd := cli{env: model(s.URL()), dir: dir}.command(t, "run", "-script", "shop.star", "-script-url", shop.URL, "-json", "Order tea")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	ended := make(chan struct{}) // stderr is closed: the process is gone
	go func() {
		defer close(ended)
		for sc := bufio.NewScanner(stderr); sc.Scan(); {
			lines = append(lines, sc.Text())
		}
	}()
	select {
	case <-arrived:
	case <-ended:
		cmd.Wait()
		t.Fatalf("the command ended before the write was in flight: exit %d, stderr %q", cmd.ProcessState.ExitCode(), lines)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-ended
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr %q", code, lines)
	}
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "← save_order outcome_unknown in ") || !strings.Contains(text, "onion run: interrupted") {
		t.Errorf("stderr %q, want the write outcome_unknown and the interruption", text)
	}
	var res onion.Result
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("stdout is not the partial Result: %v\n%s", err, stdout.String())
	}
	if res.StopReason != onion.StopCanceled || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.OutcomeUnknown {
		t.Errorf("result %+v, want canceled with the write outcome_unknown", res)
	}
}

// TestRunFlags checks that the model flags reach the request: the model's
// name, the system prompt, the Responses API, and the cap on rounds.
func TestRunFlags(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("list", `{}`)),
		oniontest.Text("Nothing to do."), // asked without tools, once the cap is reached
	)
	got := cli{env: model(s.URL())}.onion(t, "run", "-tools", "todo", "-model", "tiny-model", "-system", "Answer in five words.", "-responses", "-max-iterations", "1", "Anything to do?")
	if got.code != 0 || got.stdout != "Nothing to do.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	r := reqs[0].Responses
	if r == nil {
		t.Fatal("the request went to Chat Completions, not the Responses API")
	}
	if r.Model != "tiny-model" || !strings.Contains(r.Instructions, "Answer in five words.") {
		t.Errorf("model %q, instructions %q", r.Model, r.Instructions)
	}
	if last := reqs[1].Responses; last == nil || len(last.Tools) != 0 {
		t.Errorf("after one round the model must be asked without tools: %+v", last)
	}
}

// TestCallInterrupt sends SIGINT while onion call runs a slow write: the
// call is cut and the command exits 130.
func TestCallInterrupt(t *testing.T) {
	arrived := make(chan struct{})
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(arrived)
		<-r.Context().Done()
	}))
	defer shop.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shop.star"), []byte(slowScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := cli{dir: dir}.command(t, "call", "-script", "shop.star", "-script-url", shop.URL, "save_order", `{"item":"tea"}`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-arrived:
	case <-exited:
		t.Fatalf("the command ended before the write was in flight: exit %d, stderr %q", cmd.ProcessState.ExitCode(), stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-exited
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "onion call: interrupted") {
		t.Errorf("exit %d, stderr %q; want 130 and the interruption", code, stderr.String())
	}
}

// TestRunModelFails checks that a model that refuses the request makes
// run fail with its words and exit 1, with nothing on stdout.
func TestRunModelFails(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Error(http.StatusBadRequest, `{"error":{"message":"the model tiny does not exist","type":"invalid_request_error","code":"model_not_found"}}`))
	got := cli{env: model(s.URL())}.onion(t, "run", "-model", "tiny", "hello")
	if got.code != 1 || got.stdout != "" || !strings.Contains(got.stderr, "the model tiny does not exist") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and the server's words", got.code, got.stdout, got.stderr)
	}
}

// TestRunFlagAfterPrompt checks that a flag written after the prompt is
// refused with the command line that was meant, instead of being sent as
// part of the prompt, while a dash word that names no flag, or anything
// after --, stays in the prompt.
func TestRunFlagAfterPrompt(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-tools", "todo", "hi", "-json"}, "onion run: flags go before the prompt: onion run -json hi; to pass -json as written, not as a flag, end the flags with --: onion run [flags] -- hi -json\n"},
		{[]string{"hi", "there", "--model=tiny"}, "onion run: flags go before the prompt: onion run --model=tiny hi there;"},
		{[]string{"what is", "-system", "be brief", "-responses"}, "onion run: flags go before the prompt: onion run -system 'be brief' -responses 'what is';"},
		{[]string{"-system", "--", "hi", "-json"}, "onion run: flags go before the prompt: onion run -json hi;"}, // that -- is -system's value
	} {
		s := oniontest.NewServer(t) // any request fails the test
		got := cli{env: model(s.URL())}.onion(t, append([]string{"run"}, c.args...)...)
		if got.code != 2 || !strings.HasPrefix(got.stderr, c.want) || got.stdout != "" {
			t.Errorf("onion run %q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, got.code, got.stdout, got.stderr, c.want)
		}
	}
	for _, c := range []struct {
		args   []string
		prompt string
	}{
		{[]string{"-tools", "todo", "what", "does", "-race", "do?"}, "what does -race do?"},
		{[]string{"-tools", "todo", "--", "explain", "-json"}, "explain -json"},
	} {
		s := oniontest.NewServer(t, oniontest.Text("Sure."))
		got := cli{env: model(s.URL())}.onion(t, append([]string{"run"}, c.args...)...)
		if got.code != 0 || got.stdout != "Sure.\n" {
			t.Errorf("onion run %q: exit %d, stdout %q, stderr %q", c.args, got.code, got.stdout, got.stderr)
			continue
		}
		if msgs := s.Requests()[0].Body.Messages; msgs[len(msgs)-1].Content != c.prompt {
			t.Errorf("onion run %q: the model read %q, want %q", c.args, msgs[len(msgs)-1].Content, c.prompt)
		}
	}
}

// TestApprovalTerminal answers an approval question n at a terminal, for
// run and for call: the call is denied, the command does not run, and the
// model (for run) reads the denial.
func TestApprovalTerminal(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []oniontest.Step
		args  []string
		after string // what the command writes after the denial
		code  int
	}{
		{
			name:  "Run",
			steps: []oniontest.Step{oniontest.ToolCalls(oniontest.Call("run_command", `{"command":"touch made"}`)), oniontest.Text("I did not make it.")},
			args:  []string{"run", "-tools", "shell", "Make a file"},
			after: "I did not make it.",
			code:  0,
		},
		{
			name:  "Call",
			args:  []string{"call", "-tools", "shell", "run_command", `{"command":"touch made"}`},
			after: "onion call: run_command was not run: ",
			code:  exitDenied,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := oniontest.NewServer(t, c.steps...)
			dir := t.TempDir()
			cmd := cli{env: model(s.URL()), dir: dir}.command(t, c.args...)
			cmd.Stdin = nil
			f, err := pty.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			defer cmd.Process.Kill()
			term := newTerminal(t, f)
			term.expect(`The agent wants to run run_command (write) with {"command":"touch made"}`)
			term.expect("Allow? [y/N] ")
			term.typeLine("n")
			term.expectNext("n\r\n")
			if c.name == "Run" {
				term.expect("← run_command denied in ")
			}
			term.expect(c.after)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
				t.Error("the denied command ran")
			}
			if c.name == "Run" {
				if res := s.Requests()[1].ToolResults(); len(res) != 1 || res[0].Content != onion.DeniedText {
					t.Errorf("the model read %+v, want the denial", res)
				}
			}
		})
	}
}

// TestRunErrorSaysOnionOnce: a failed run is reported as "onion run: …"
// with the library's own "onion: " left out, and a 404 from a base URL
// without /v1 says so.
func TestRunErrorSaysOnionOnce(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("never sent"))
	got := cli{env: []string{"OPENAI_BASE_URL=" + strings.TrimSuffix(s.URL(), "/v1")}}.onion(t, "run", "-tools", "todo", "hi")
	if got.code != exitFailed || strings.Contains(got.stderr, "onion: ") || !strings.Contains(got.stderr, "onion run: agent") ||
		!strings.Contains(got.stderr, "the base URL has no /v1") {
		t.Errorf("exit %d, stderr %q", got.code, got.stderr)
	}
}
