package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
		if tt.command == "kill -9 $$" && got == "(no output)\n[exit code 137]" {
			continue // on Linux the shell's parent, the command's init, reports its death as 128+9
		}
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

// markProcesses returns an option giving every process a command starts an
// environment variable naming this test, and a func listing the processes
// other than this one that still carry it, read from /proc.
func markProcesses(t *testing.T) (mark ShellOption, survivors func() []string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skipf("no /proc to look for processes in: %v", err)
	}
	kv := "ONION_SHELL_TEST_MARK=" + t.Name() + "-" + strconv.Itoa(os.Getpid())
	return ShellEnv(kv), func() []string {
		t.Helper()
		var found []string
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, dir := range dirs {
			if dir == "/proc/"+strconv.Itoa(os.Getpid()) {
				continue
			}
			env, err := os.ReadFile(dir + "/environ")
			if err != nil {
				continue // gone, or a zombie
			}
			if slices.Contains(strings.Split(string(env), "\x00"), kv) {
				cmdline, _ := os.ReadFile(dir + "/cmdline")
				found = append(found, dir+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
		return found
	}
}

// TestShellTimeoutKillsProcessGroup checks that a command's time running
// out kills it and the job it left in the background, and that the error
// holds the output so far. The time runs out once the command has printed
// and its job runs, which the command tells through a FIFO: a real timer
// could fire before a loaded machine has even started the shell.
func TestShellTimeoutKillsProcessGroup(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	mark, survivors := markProcesses(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}) // closed once the command wrote to the FIFO, or ended
	go func() {
		defer close(started)
		if b, err := os.ReadFile(fifo); err != nil || len(b) == 0 {
			t.Errorf("reading the FIFO: %q, %v", b, err)
		}
	}()
	endsWhenStarted := ShellOption(func(s *shell) {
		s.withTimeout = func(ctx context.Context, _ time.Duration) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-started:
					cancel()
				case <-ctx.Done():
				}
			}()
			return ctx, cancel
		}
	})
	tool := NewShell(mark, ShellDir(dir), ShellTimeout(200*time.Millisecond), endsWhenStarted)
	out, err := runShell(t, tool, "sleep 10 & echo started; echo x >started; wait")
	if f, ferr := os.OpenFile(fifo, os.O_RDWR, 0); ferr == nil {
		f.Close() // let the reader go if the command never opened the FIFO
	}
	<-started
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "ran past the 200ms time limit and was killed") {
		t.Fatalf("got %q, %v; want a timeout error", out, err)
	}
	if !strings.Contains(err.Error(), "started") {
		t.Errorf("the error lacks the partial output: %v", err)
	}
	if left := survivors(); len(left) > 0 {
		t.Errorf("processes outlived the timeout: %q", left)
	}
}

func TestShellKillsBackgroundLeftovers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	mark, survivors := markProcesses(t)
	out, err := runShell(t, NewShell(mark), "sleep 10 & echo started")
	if err != nil || !strings.HasPrefix(out, "started\n") {
		t.Fatalf("got %q, %v", out, err)
	}
	if left := survivors(); len(left) > 0 {
		t.Errorf("background processes outlived the call: %q", left)
	}
}

// TestShellContainsSetsid checks that a process which leaves the command's
// process group and session with setsid still ends with the call: the
// issue's command, and one that waits until the escape has happened, so
// that the check cannot pass by catching the process before it left.
func TestShellContainsSetsid(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	mark, survivors := markProcesses(t)
	tool := NewShell(mark, ShellDir(t.TempDir()))
	for _, command := range []string{
		"setsid sleep 600 >/dev/null 2>&1 </dev/null &",
		"setsid sh -c 'touch escaped; exec sleep 600' >/dev/null 2>&1 </dev/null & while [ ! -e escaped ]; do :; done",
	} {
		out, err := runShell(t, tool, command)
		skipWithoutNamespaces(t)
		if err != nil || !strings.HasSuffix(out, "[exit code 0]") {
			t.Fatalf("%s: got %q, %v", command, out, err)
		}
		if left := survivors(); len(left) > 0 {
			t.Errorf("%s: a setsid process outlived the call: %q", command, left)
		}
	}
}

// TestShellTimeoutContainsSetsid checks that the timeout kills a process
// that left the process group with setsid. The command waits until that
// process runs before it sleeps, so the kill finds it there.
func TestShellTimeoutContainsSetsid(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	mark, survivors := markProcesses(t)
	dir := t.TempDir()
	tool := NewShell(mark, ShellDir(dir), ShellTimeout(2*time.Second))
	_, err := runShell(t, tool, `setsid sh -c 'touch escaped; exec sleep 600' & while [ ! -e escaped ]; do :; done; sleep 5`)
	skipWithoutNamespaces(t)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the timeout", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped")); err != nil {
		t.Skip("the setsid process did not start within the timeout; nothing to check")
	}
	if left := survivors(); len(left) > 0 {
		t.Errorf("a setsid process outlived the timeout: %q", left)
	}
}

// TestShellEnvironmentHoldsNoSecrets checks that an allowed read-only
// command cannot read the agent's credentials from its own environment,
// nor a variable no option passes, and that ShellPassEnv and ShellEnv
// still let chosen variables through.
func TestShellEnvironmentHoldsNoSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-openai-key")
	t.Setenv("GITHUB_TOKEN", "ghp-test-token")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-test-secret")
	t.Setenv("DB_PASSWORD", "db-test-password")
	t.Setenv("DEPLOY_TOKEN_FOR_SHELL", "passed-on-purpose")
	t.Setenv("GIT_AUTHOR_NAME", "Ada")
	tool := NewShell(ReadOnlyCommands("cat"), ShellPassEnv("DEPLOY_TOKEN_FOR_SHELL"), ShellEnv("ONION_SET=by-option"))
	command := "cat /proc/self/environ"
	args, _ := json.Marshal(map[string]string{"command": command})
	if tool.NeedsApproval(context.Background(), onion.Call{Name: "run_command", Arguments: args}) {
		t.Fatalf("%q needs approval; the test is of a command that does not", command)
	}
	out, err := runShell(t, tool, command)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(out, "\x00")
	for _, secret := range []string{"sk-test-openai-key", "ghp-test-token", "aws-test-secret", "db-test-password"} {
		if strings.Contains(out, secret) {
			t.Errorf("the command read %q from its environment", secret)
		}
	}
	if strings.Contains(out, "GIT_AUTHOR_NAME") {
		t.Error("the command read GIT_AUTHOR_NAME, which no option passes")
	}
	for _, want := range []string{"DEPLOY_TOKEN_FOR_SHELL=passed-on-purpose", "ONION_SET=by-option", "PATH=" + os.Getenv("PATH")} {
		if !slices.Contains(env, want) {
			t.Errorf("the environment lacks %s", want)
		}
	}
}

// TestShellEnvironmentIsAllowListed checks that commands see only the
// variables named in the allow-list, whatever the others are called, and
// those ShellPassEnv and ShellEnv add.
func TestShellEnvironmentIsAllowListed(t *testing.T) {
	for name, value := range map[string]string{
		"DATABASE_URL": "postgres://u:db-secret@h/d", "MYSQL_PWD": "mysql-secret", "CI_JOB_JWT": "jwt-secret",
		"SLACK_WEBHOOK_URL": "https://hooks.example/slack-secret", "GIT_AUTHOR_NAME": "Ada-not-allowed",
		"LANG": "C.UTF-8", "LC_TIME": "C", "TZ": "UTC", "HOME": "/home/test-home", "ONION_PASSED": "passed-on-purpose",
	} {
		t.Setenv(name, value)
	}
	out, err := runShell(t, NewShell(ShellPassEnv("ONION_PASSED"), ShellEnv("ONION_SET=by-option")), "env")
	if err != nil {
		t.Fatal(err)
	}
	for _, leaked := range []string{"secret", "Ada-not-allowed", "DATABASE_URL", "MYSQL_PWD", "CI_JOB_JWT", "SLACK_WEBHOOK_URL"} {
		if strings.Contains(out, leaked) {
			t.Errorf("the command's environment holds %q:\n%s", leaked, out)
		}
	}
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/test-home", "LANG=C.UTF-8", "LC_TIME=C", "TZ=UTC",
		"ONION_PASSED=passed-on-purpose", "ONION_SET=by-option"} {
		if !strings.Contains("\n"+out, "\n"+want+"\n") {
			t.Errorf("the command's environment lacks %s:\n%s", want, out)
		}
	}
}

// TestShellCannotReadAgentEnvironment checks that an allowed read-only
// command cannot read the agent's environment through /proc either: the
// command sees a /proc of its own namespace, without the agent in it.
func TestShellCannotReadAgentEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-agent-key")
	tool := NewShell(ReadOnlyCommands("cat"))
	out, err := runShell(t, tool, "cat /proc/"+strconv.Itoa(os.Getpid())+"/environ")
	skipWithoutNamespaces(t)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "sk-test-agent-key") {
		t.Errorf("the command read the agent's environment: %.200q", out)
	}
}

// TestShellDocsSuggestOnlyReadOnlyCommands checks that the documentation
// suggests for ReadOnlyCommands no program that can change things with the
// right arguments.
func TestShellDocsSuggestOnlyReadOnlyCommands(t *testing.T) {
	changers := []string{"date", "find", "git", "sed", "env", "xargs", "tee", "touch", "awk", "perl", "python"}
	for _, file := range []string{"shell.go", "doc.go", "README.md", "../README.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`ReadOnlyCommands\(([^)]*)\)|such as ("[^.]*")`).FindAllStringSubmatch(string(b), -1) {
			list := m[1] + m[2]
			for _, c := range changers {
				if strings.Contains(list, `"`+c+`"`) {
					t.Errorf("%s suggests %q for ReadOnlyCommands: %s", file, c, m[0])
				}
			}
		}
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
