package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
)

// TestCall runs single tools, and checks the exit status of each way a
// call ends.
func TestCall(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("buy milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		r          cli
		args       []string
		code       int
		stdout     string // exactly, when not empty
		stderrHas  string
		createdNot string // a file the call must not create
	}{
		{name: "Success", args: []string{"-tools", "todo", "add", `{"text":"buy milk"}`}, code: 0, stdout: `{"id":1,"text":"buy milk","done":false}` + "\n"},
		{name: "NoArguments", args: []string{"-tools", "todo", "list"}, code: 0, stdout: "[]\n"},
		{name: "File", r: cli{dir: dir}, args: []string{"-tools", "files", "read_file", `{"path":"notes.txt"}`}, code: 0, stdout: "buy milk\n"},
		{name: "OtherDirectory", args: []string{"-C", dir, "-tools", "files", "read_file", `{"path":"notes.txt"}`}, code: 0, stdout: "buy milk\n"},
		{name: "InvalidArguments", args: []string{"-tools", "todo", "add", `{"txt":"buy milk"}`}, code: 3, stderrHas: "text: required field is missing"},
		{name: "NotJSON", args: []string{"-tools", "todo", "add", `text=milk`}, code: 3, stderrHas: "invalid arguments"},
		{name: "ToolFailed", r: cli{dir: dir}, args: []string{"-tools", "files", "read_file", `{"path":"absent.txt"}`}, code: 4, stderrHas: "no such file"},
		{name: "UnknownTool", args: []string{"-tools", "todo", "frobnicate", `{}`}, code: 2, stderrHas: `no tool "frobnicate": the tools are add, complete, list, remove`},
		{name: "NoTool", args: []string{"-tools", "todo"}, code: 2, stderrHas: "no tool named: give the tool's name"},
		{name: "FlagAfterTool", args: []string{"add", `{"text":"x"}`, "-tools", "todo"}, code: 2, stderrHas: `onion call: flags go before the tool's name: onion call -tools todo add '{"text":"x"}';`},
		{name: "FlagAfterArguments", r: cli{dir: dir}, args: []string{"-tools", "shell", "run_command", `{"command":"touch made"}`, "-approve", "run_command"}, code: 2, stderrHas: "onion call -approve run_command run_command '{\"command\":\"touch made\"}'", createdNot: "made"},
		{name: "DeniedOnAPipe", r: cli{dir: dir, stdin: "y\n"}, args: []string{"-tools", "shell", "run_command", `{"command":"touch made"}`}, code: 5, stderrHas: "allow it with -approve run_command", createdNot: "made"},
		{name: "TimedOut", r: cli{dir: dir}, args: []string{"-tools", "shell", "-approve", "run_command", "-tool-timeout", "50ms", "run_command", `{"command":"sleep 60"}`}, code: 4, stderrHas: "run_command was cut off after 50ms: give a longer -tool-timeout, or 0 for no limit"},
		{name: "Approved", r: cli{dir: dir}, args: []string{"-tools", "shell", "-approve", "run_command", "run_command", `{"command":"echo hi"}`}, code: 0, stdout: "hi\n[exit code 0]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.r.onion(t, append([]string{"call"}, c.args...)...)
			if got.code != c.code {
				t.Errorf("exit %d, want %d; stdout %q, stderr %q", got.code, c.code, got.stdout, got.stderr)
			}
			if c.stdout != "" && got.stdout != c.stdout {
				t.Errorf("stdout %q, want %q", got.stdout, c.stdout)
			}
			if c.stdout == "" && got.stdout != "" {
				t.Errorf("stdout %q, want nothing", got.stdout)
			}
			if !strings.Contains(got.stderr, c.stderrHas) {
				t.Errorf("stderr %q, want it to say %q", got.stderr, c.stderrHas)
			}
			if c.createdNot != "" {
				if _, err := os.Stat(filepath.Join(dir, c.createdNot)); err == nil {
					t.Errorf("the denied call ran: %s exists", c.createdNot)
				}
			}
		})
	}
}

// TestCallUsageSaysWhatIsWrong: a usage mistake of call says what was
// wrong in one line, as run's do, rather than printing every flag; with no
// tools chosen it says so rather than "the tools are" and nothing.
func TestCallUsageSaysWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"call"}, "no tool named: give the tool's name"},
		{[]string{"call", "-tools", "todo", "add", "a", "b"}, `3 arguments after the flags (["add" "a" "b"])`},
		{[]string{"call", "add", "{}"}, "no tools: choose some with -tools"},
	} {
		got := cli{}.onion(t, c.args...)
		if got.code != exitUsage || !strings.Contains(got.stderr, c.want) || strings.Contains(got.stderr, "Flags:") || strings.Count(got.stderr, "\n") != 1 {
			t.Errorf("onion %q: exit %d, stderr %q; want %d and one line saying %q", c.args, got.code, got.stderr, exitUsage, c.want)
		}
	}
}

// TestFilesDeleteAsksInTheCommand: in the command, delete_file needs
// approval (a deleted file cannot come back); write_file and the reads do
// not.
func TestFilesDeleteAsksInTheCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := cli{dir: dir}.onion(t, "call", "-tools", "files", "delete_file", `{"path":"keep.txt"}`)
	if got.code != exitDenied {
		t.Errorf("exit %d, stderr %q; want %d, the delete denied (stdin is no terminal)", got.code, got.stderr, exitDenied)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Errorf("the file was deleted: %v", err)
	}
	if got := (cli{dir: dir}).onion(t, "call", "-tools", "files", "-approve", "delete_file", "delete_file", `{"path":"keep.txt"}`); got.code != 0 {
		t.Errorf("-approve delete_file: exit %d, stderr %q", got.code, got.stderr)
	}
}

// TestCallDeniedByTheMCPServer: a call the MCP server denies (it needs
// approval there, and this client cannot be asked) did not run: exit 5,
// as a denial here is, not 4.
func TestCallDeniedByTheMCPServer(t *testing.T) {
	dir := t.TempDir()
	got := cli{dir: dir}.onion(t, "call", "-mcp", bin+" serve -tools shell", "run_command", `{"command":"touch ran"}`)
	if got.code != exitDenied || !strings.Contains(got.stderr, "the MCP server denied it") {
		t.Errorf("exit %d, stderr %q; want %d, denied by the server", got.code, got.stderr, exitDenied)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran")
	}
}

// TestCallBoundedGoexit: a tool that ends its goroutine without returning
// ends the call as cut, as in the agent loop, rather than hanging it.
func TestCallBoundedGoexit(t *testing.T) {
	tool, err := onion.NewTool(func(ctx context.Context) (string, error) {
		runtime.Goexit()
		return "", nil
	}, onion.Name("quit"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := callBounded(context.Background(), tool, "{}", 0)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errCallExited) {
			t.Fatalf("err = %v, want %v", err, errCallExited)
		}
	case <-time.After(time.Minute):
		t.Fatal("the call hung")
	}
}
