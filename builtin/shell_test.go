package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/onionkit/onion"
)

// runShell calls the run_command tool through onion with one command.
func runShell(t *testing.T, tool *onion.Tool, command string) (string, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command})
	return tool.Call(context.Background(), string(args))
}

func TestShellOutputAndExitCode(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tool := NewShell()
	tests := []struct{ command, want string }{
		{"echo hello", "hello\n[exit code 0]"},
		{"printf 'no newline'", "no newline\n[exit code 0]"},
		{"true", "(no output)\n[exit code 0]"},
		{"echo out; echo err >&2; exit 3", "out\nerr\n[exit code 3]"},
		{"kill -9 $$", "(no output)\n[killed by signal: killed]"},
		{"no-such-command-xyz", "not found"},
	}
	for _, tt := range tests {
		got, err := runShell(t, tool, tt.command)
		if err != nil || !strings.Contains(got, tt.want) {
			t.Errorf("%q = %q, %v; want %q", tt.command, got, err, tt.want)
		}
	}
	if _, err := runShell(t, tool, "  "); err == nil || !strings.Contains(err.Error(), "command is empty") {
		t.Errorf("empty command: %v", err)
	}
}

func TestShellDefinition(t *testing.T) {
	tool := NewShell()
	if tool.Name() != "run_command" || tool.Intent() != onion.Write {
		t.Errorf("name %q, intent %q", tool.Name(), tool.Intent())
	}
	if !strings.HasPrefix(tool.Description(), "Run a shell command") {
		t.Errorf("description = %q", tool.Description())
	}
	var schema struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	p := schema.Properties["command"]
	if len(schema.Properties) != 1 || p.Type != "string" || !strings.Contains(p.Description, "/bin/sh -c") || len(schema.Required) != 1 {
		t.Errorf("schema = %s", tool.Schema())
	}
}

func TestShellTimeoutKillsProcessGroup(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tool := NewShell(ShellTimeout(200 * time.Millisecond))
	// The shell starts a child and prints its pid, then waits for it.
	out, err := runShell(t, tool, "sleep 10 & echo child=$!; wait")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "ran past the 200ms time limit and was killed") {
		t.Fatalf("got %q, %v; want a timeout error", out, err)
	}
	_, after, ok := strings.Cut(err.Error(), "child=")
	if !ok {
		t.Fatalf("the error lacks the partial output: %v", err)
	}
	pid, convErr := strconv.Atoi(strings.TrimSpace(after))
	if convErr != nil {
		t.Fatalf("child pid in %q: %v", after, convErr)
	}
	waitGone(t, pid)
}

func TestShellKillsBackgroundLeftovers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	out, err := runShell(t, NewShell(), "sleep 10 & echo child=$!")
	if err != nil || !strings.Contains(out, "background were killed") {
		t.Fatalf("got %q, %v", out, err)
	}
	_, after, _ := strings.Cut(out, "child=")
	pid, convErr := strconv.Atoi(strings.Fields(after)[0])
	if convErr != nil {
		t.Fatal(convErr)
	}
	waitGone(t, pid)
}

// waitGone fails the test unless process pid is dead (gone, or a zombie
// nobody has reaped yet) within a few seconds; a killed process needs a
// moment to be torn down after SIGKILL is sent.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		// The state follows the parenthesised command name.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i:]), ") Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestShellCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewShell().Call(ctx, `{"command":"echo hi"}`)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestShellMaxOutput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	out, err := runShell(t, NewShell(ShellMaxOutput(1000)), "seq 1 100000")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "99999\n100000\n[exit code 0]") {
		t.Errorf("start or end missing: %q ... %q", out[:20], out[len(out)-40:])
	}
	if !strings.Contains(out, "bytes of output cut: showing the first 500 and the last 500 bytes of 588895") {
		t.Errorf("no cut marker in %q", out)
	}
	if len(out) > 1200 {
		t.Errorf("output is %d bytes, want about 1000", len(out))
	}
}

func TestShellDir(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	out, err := runShell(t, NewShell(ShellDir(dir)), "pwd")
	real, _ := filepath.EvalSymlinks(dir)
	if err != nil || (out != dir+"\n[exit code 0]" && out != real+"\n[exit code 0]") {
		t.Errorf("pwd = %q, %v; want %s", out, err, dir)
	}
}

func TestShellApproval(t *testing.T) {
	ctx := context.Background()
	needs := func(tool *onion.Tool, command string) bool {
		args, _ := json.Marshal(map[string]string{"command": command})
		return tool.NeedsApproval(ctx, onion.Call{Name: "run_command", Arguments: args})
	}
	if !needs(NewShell(), "ls") {
		t.Error("default shell runs ls without approval")
	}
	tool := NewShell(ReadOnlyCommands("ls", "cat", "pwd"))
	tests := []struct {
		command string
		ask     bool
	}{
		{"ls -la", false},
		{"  cat  README.md", false},
		{"pwd", false},
		{"rm -rf /", true},
		{"ls; rm x", true},
		{"ls && rm x", true},
		{"cat x | sh", true},
		{"ls > out.txt", true},
		{"cat < /etc/passwd", true},
		{"ls $(rm x)", true},
		{"ls `rm x`", true},
		{"ls\nrm x", true},
		{"ls & rm x", true},
		{"FOO=1 ls", true},
		{"/bin/rm ls", true},
		{"lsx", true},
		{"ls\u00a0rm", true},
		{"\tls", false},
		{"", true},
	}
	for _, tt := range tests {
		if got := needs(tool, tt.command); got != tt.ask {
			t.Errorf("approval for %q = %v, want %v", tt.command, got, tt.ask)
		}
	}
	if !tool.NeedsApproval(ctx, onion.Call{Arguments: json.RawMessage(`not json`)}) {
		t.Error("unreadable arguments run without approval")
	}
}

func TestCappedBuffer(t *testing.T) {
	tests := []struct {
		max    int
		writes []string
		want   string
	}{
		{10, []string{"abc", "def"}, "abcdef"},
		{6, []string{"abc", "def"}, "abcdef"},
		{6, []string{"abcdefg"}, "abc\n[... 1 bytes of output cut: showing the first 3 and the last 3 bytes of 7 ...]\nefg"},
		{4, []string{"a", "b", "c", "d", "e", "f", "g", "h"}, "ab\n[... 4 bytes of output cut: showing the first 2 and the last 2 bytes of 8 ...]\ngh"},
		{4, []string{}, "(no output)"},
	}
	for _, tt := range tests {
		b := &cappedBuffer{max: tt.max}
		for _, w := range tt.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if got := b.String(); got != tt.want {
			t.Errorf("max %d, writes %q: %q, want %q", tt.max, tt.writes, got, tt.want)
		}
	}
	// Many writes past the cap keep memory bounded.
	b := &cappedBuffer{max: 100}
	for range 10000 {
		b.Write([]byte("0123456789"))
	}
	if len(b.tail) > 2*50+4096 || !strings.HasSuffix(b.String(), "0123456789") {
		t.Errorf("tail grew to %d bytes", len(b.tail))
	}
}
