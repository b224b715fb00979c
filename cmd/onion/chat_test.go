package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// terminal is the far side of a pseudo-terminal a command runs in: what
// the command writes to it (stdout and stderr alike) and what a user types.
type terminal struct {
	t       *testing.T
	pty     *os.File
	mu      sync.Mutex    // guards out and ended
	out     []byte        // everything read so far
	seen    int           // how much of out expect has matched past
	ended   bool          // the command closed the terminal
	changed chan struct{} // signalled after each read
}

func newTerminal(t *testing.T, f *os.File) *terminal {
	term := &terminal{t: t, pty: f, changed: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			term.mu.Lock()
			term.out = append(term.out, buf[:n]...)
			term.ended = err != nil
			term.mu.Unlock()
			select {
			case term.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return term
}

// expect waits until the command has written want since the last match.
// The wait is bounded only so that a broken command fails the test instead
// of hanging it.
func (term *terminal) expect(want string) {
	term.t.Helper()
	guard := time.After(time.Minute)
	for {
		term.mu.Lock()
		rest := string(term.out[term.seen:])
		ended := term.ended
		if i := strings.Index(rest, want); i >= 0 {
			term.seen += i + len(want)
			term.mu.Unlock()
			return
		}
		term.mu.Unlock()
		if ended {
			term.t.Fatalf("the command ended without writing %q; after the last match it wrote %q", want, rest)
		}
		select {
		case <-term.changed:
		case <-guard:
			term.t.Fatalf("the command did not write %q; after the last match it wrote %q", want, rest)
		}
	}
}

// expectNext waits until the command has written want right after the
// last match.
func (term *terminal) expectNext(want string) {
	term.t.Helper()
	guard := time.After(time.Minute)
	for {
		term.mu.Lock()
		rest := string(term.out[term.seen:])
		ended := term.ended
		if len(rest) >= len(want) || ended {
			term.mu.Unlock()
			if !strings.HasPrefix(rest, want) {
				term.t.Fatalf("after the last match the command wrote %q, want %q first", rest, want)
			}
			term.mu.Lock()
			term.seen += len(want)
			term.mu.Unlock()
			return
		}
		term.mu.Unlock()
		select {
		case <-term.changed:
		case <-guard:
			term.t.Fatalf("the command did not write %q; after the last match it wrote %q", want, rest)
		}
	}
}

// typeLine types text and Enter.
func (term *terminal) typeLine(text string) {
	term.t.Helper()
	if _, err := term.pty.WriteString(text + "\r"); err != nil {
		term.t.Fatal(err)
	}
}

// TestChatTerminal chats under a pseudo-terminal as a user would: a prompt
// with a tool call (the spinner showing while the model thinks), the slash
// commands, an approval answered y at the terminal, Ctrl-C during an
// answer, and Ctrl-D to leave.
func TestChatTerminal(t *testing.T) {
	thinking := make(chan struct{}) // closed once the spinner was seen
	sawSpinner := sync.OnceFunc(func() { close(thinking) })
	defer sawSpinner() // never leave the server's handler waiting
	requested := make(chan struct{})
	s := oniontest.NewServer(t,
		oniontest.Func(func(oniontest.Request) oniontest.Step {
			<-thinking
			return oniontest.ToolCalls(oniontest.Call("add", `{"text":"buy milk"}`))
		}),
		oniontest.Text("I added buy milk."),
		oniontest.ToolCalls(oniontest.Call("run_command", `{"command":"touch made"}`)),
		oniontest.Text("I made the file."),
		oniontest.Func(func(oniontest.Request) oniontest.Step {
			close(requested)
			return oniontest.Text("too late").Delay(time.Hour) // until Ctrl-C cuts it
		}),
	)
	dir := t.TempDir()
	cmd := cli{env: model(s.URL()), dir: dir}.command(t, "chat", "-tools", "todo,shell")
	cmd.Stdin = nil
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer cmd.Process.Kill()
	term := newTerminal(t, f)

	term.expect("onion chat with 5 tools")
	term.expect("> ")
	term.typeLine("Remind me to buy milk")
	term.expect("⠋ thinking")
	sawSpinner()
	term.expect(`→ add {"text":"buy milk"}`)
	term.expect("← add succeeded in ")
	term.expect("I added buy milk.")
	term.expect("> ")

	term.typeLine("/tools")
	term.expect("add (write): Puts a new task")
	term.expect("run_command (write): ")
	term.expect("> ")
	term.typeLine("/history")
	term.expect("user: Remind me to buy milk")
	term.expect("assistant: I added buy milk.")
	term.expect("> ")

	term.typeLine("Make a file")
	term.expect("The agent wants to run run_command (write) with {\"command\":\"touch made\"}")
	term.expect("Allow? [y/N] ")
	term.typeLine("y")
	// The call's start line comes before the question or after the
	// answer, never into the line being typed.
	term.expectNext("y\r\n")
	term.expect("← run_command succeeded in ")
	term.expect("I made the file.")
	term.expect("> ")
	if _, err := os.Stat(filepath.Join(dir, "made")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	term.mu.Lock()
	if !strings.Contains(string(term.out), "→ run_command {\"command\":\"touch made\"}\r\n") {
		t.Errorf("no start line for run_command in %q", term.out)
	}
	term.mu.Unlock()

	term.typeLine("/save saved.json")
	term.expect("(saved to saved.json)")
	term.expect("> ")
	data, err := os.ReadFile(filepath.Join(dir, "saved.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved []onion.Message
	if err := json.Unmarshal(data, &saved); err != nil || len(saved) != 4 || saved[0].Content != "Remind me to buy milk" || saved[3].Content != "I made the file." {
		t.Errorf("saved conversation (%v):\n%s", err, data)
	}
	term.typeLine("/reset")
	term.expect("(the conversation is empty again)")
	term.typeLine("/history")
	term.expect("(no messages yet)")
	term.expect("> ")

	term.typeLine("Take your time")
	<-requested
	if _, err := f.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	term.expect("(interrupted)")
	term.expect("> ")
	if _, err := f.Write([]byte{4}); err != nil { // Ctrl-D
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit interface{ ExitCode() int }
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 0) {
		t.Errorf("after Ctrl-D: %v; want exit status 0", err)
	}
}

// TestChatPipe reads the prompts from a pipe, one a line, with the slash
// commands among them.
func TestChatPipe(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Hello."), oniontest.Text("Still here."), oniontest.Text("Welcome back."))
	dir := t.TempDir()
	got := cli{env: model(s.URL()), dir: dir, stdin: "hi\n/history\n\nare you there?\n/nonsense\n"}.onion(t, "chat", "-session", "chat.json")
	if got.code != 0 {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	if want := "Hello.\nuser: hi\nassistant: Hello.\nStill here.\n"; got.stdout != want {
		t.Errorf("stdout %q, want %q", got.stdout, want)
	}
	if !strings.Contains(got.stderr, "unknown command /nonsense") {
		t.Errorf("stderr %q, want the unknown command named", got.stderr)
	}
	var roles []string
	for _, m := range s.Requests()[1].Body.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, " ") != "system user assistant user" {
		t.Errorf("the second prompt's request carries %v, want the system prompt, the first turn and the prompt", roles)
	}
	// -session saved both turns: a new chat goes on from them.
	got = cli{env: model(s.URL()), dir: dir, stdin: "back\n"}.onion(t, "chat", "-session", "chat.json")
	if got.code != 0 || got.stdout != "Welcome back.\n" {
		t.Fatalf("second chat: exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	if n := len(s.Requests()[2].Body.Messages); n != 6 {
		t.Errorf("the second chat's request carries %d messages, want the system prompt, both saved turns and the prompt", n)
	}
}
