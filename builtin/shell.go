package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/onionkit/onion"
)

// Defaults of the run_command tool, changed with its options.
const (
	defaultShellTimeout   = 30 * time.Second
	defaultShellMaxOutput = 64 << 10
)

// shellMeta are the characters that let one command line run more than one
// program, redirect output or substitute commands; a command containing any
// of them is never treated as read-only.
const shellMeta = ";|&`$()<>\n\r"

// shellDescription is what the model reads about run_command.
const shellDescription = `Run a shell command with /bin/sh -c and return its combined standard output and error, ending with its exit code. A command that exits non-zero is not a failure of this tool: read the output to see what went wrong. Commands run without a terminal and without standard input, and are killed when they run past the time limit; whatever a command starts in the background ends with it. So do not start interactive programs, or servers meant to outlive the command.`

// ShellOption configures the tool made by NewShell.
type ShellOption func(*shell)

// ShellTimeout sets how long one command may run (default 30 s). When the
// time is up the command and every process it started are killed, and the
// tool returns an error holding the output so far.
func ShellTimeout(d time.Duration) ShellOption {
	return func(s *shell) {
		if d > 0 {
			s.timeout = d
		}
	}
}

// ShellDir sets the working directory commands run in (default: the current
// directory of the process).
func ShellDir(dir string) ShellOption {
	return func(s *shell) { s.dir = dir }
}

// ShellMaxOutput caps the output returned to the model, in bytes (default
// 64 KiB). Longer output keeps its beginning and its end, with a marker
// saying how much was cut between them.
func ShellMaxOutput(n int) ShellOption {
	return func(s *shell) {
		if n > 0 {
			s.maxOutput = n
		}
	}
}

// ReadOnlyCommands lets commands whose first word is one of names run without
// asking for approval, as long as the command line holds none of the shell
// characters ; | & ` $ ( ) > < or a newline. List only programs that cannot
// change anything whatever their arguments, such as "ls", "pwd", "wc" or
// "cat". Many that look harmless are not: "date -s" sets the clock, "find
// -delete" deletes, "sed -i" edits, "git" can push, and "env", "xargs",
// "nice" or "timeout" run any program they are given. A read-only command
// still reads whatever this process may read: the environment it sees
// holds only variables allowed by name (see ShellPassEnv), but files can
// hold secrets.
func ReadOnlyCommands(names ...string) ShellOption {
	return func(s *shell) {
		for _, n := range names {
			if n != "" {
				s.readOnly[n] = true
			}
		}
	}
}

// ShellPassEnv passes the named environment variables of this process to
// commands. By default commands see only PATH, HOME, USER, LOGNAME, SHELL,
// TMPDIR, TZ, TERM, LANG, LANGUAGE, the LC_ variables and SSL_CERT_FILE
// and SSL_CERT_DIR of this process's environment: whatever else it holds,
// the agent's own credentials with it (OPENAI_API_KEY, DATABASE_URL,
// CI_JOB_JWT, SLACK_WEBHOOK_URL…), is not the model's to read. A command
// that needs more, GOPATH or a proxy say, gets it through this option or
// ShellEnv.
func ShellPassEnv(names ...string) ShellOption {
	return func(s *shell) {
		for _, n := range names {
			s.passEnv[n] = true
		}
	}
}

// ShellEnv sets environment variables for commands, each "NAME=value",
// over what they inherit; entries without "=" are ignored.
func ShellEnv(vars ...string) ShellOption {
	return func(s *shell) {
		for _, v := range vars {
			if name, _, ok := strings.Cut(v, "="); ok && name != "" {
				s.setEnv = append(s.setEnv, v)
			}
		}
	}
}

// shell is the configuration of one run_command tool.
type shell struct {
	timeout   time.Duration
	dir       string
	maxOutput int
	readOnly  map[string]bool // first words that need no approval
	passEnv   map[string]bool // variables passed besides commandEnv
	setEnv    []string        // NAME=value, set over the inherited ones
	// withTimeout is context.WithTimeout; a test ends a command's time
	// itself, once the command has got where the test needs it.
	withTimeout func(context.Context, time.Duration) (context.Context, context.CancelFunc)
}

// commandEnv are the variables of this process that commands see without
// ShellPassEnv, with those whose names start with LC_: what programs need
// to find the user's files and certificates, speak the user's language and
// tell the time. It is a list of what may go, not of what may not: a
// credential can be called anything.
var commandEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "TERM", "LANG", "LANGUAGE", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// environ returns the environment of a command: the variables of this
// process in commandEnv or passed by ShellPassEnv, with ShellEnv's over
// them.
func (s *shell) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if s.passEnv[name] || slices.Contains(commandEnv, name) || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	return append(env, s.setEnv...) // exec keeps the last of duplicates
}

// commandArgs are the arguments of run_command.
type commandArgs struct {
	Command string `json:"command" doc:"the command line, run with /bin/sh -c in the working directory, such as \"ls -la\" or \"go test ./...\""`
}

// NewShell returns the run_command tool, which runs a shell command and
// returns its output and exit code. Every command asks the agent's approver
// first, except those allowed by ReadOnlyCommands. It panics only if the
// onion package rejects the tool, which is a bug.
func NewShell(opts ...ShellOption) *onion.Tool {
	s := &shell{timeout: defaultShellTimeout, maxOutput: defaultShellMaxOutput, readOnly: map[string]bool{}, passEnv: map[string]bool{},
		withTimeout: context.WithTimeout}
	for _, o := range opts {
		o(s)
	}
	approve := onion.RequireApproval()
	if len(s.readOnly) > 0 {
		approve = onion.ApproveIf(func(_ context.Context, c onion.Call) (bool, error) {
			var args commandArgs
			if err := json.Unmarshal(c.Arguments, &args); err != nil {
				return true, nil // unreadable: let a person decide
			}
			return !s.isReadOnly(args.Command), nil
		})
	}
	return mustTool(onion.NewTool(s.run,
		onion.Name("run_command"),
		onion.Description(shellDescription),
		onion.Write,
		approve,
	))
}

// isReadOnly reports whether command runs one allow-listed program and
// nothing else.
func (s *shell) isReadOnly(command string) bool {
	if strings.ContainsAny(command, shellMeta) {
		return false
	}
	// Split as sh does (IFS), not on every Unicode space.
	words := strings.FieldsFunc(command, func(r rune) bool { return r == ' ' || r == '\t' })
	return len(words) > 0 && s.readOnly[words[0]]
}

// run runs one command to completion, or until the timeout or ctx ends it.
func (s *shell) run(ctx context.Context, args commandArgs) (string, error) {
	if strings.TrimSpace(args.Command) == "" {
		return "", errors.New("run_command: command is empty: give a shell command line, such as \"ls\"")
	}
	if strings.ContainsRune(args.Command, 0) {
		return "", errors.New("run_command: the command holds a NUL byte, which no command line can: remove it")
	}
	runCtx, cancel := s.withTimeout(ctx, s.timeout)
	defer cancel()

	out := &cappedBuffer{max: s.maxOutput}
	cmd, err := startContained(args.Command, func(argv ...string) *exec.Cmd {
		cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
		cmd.Dir = s.dir
		cmd.Env = s.environ()
		cmd.Stdout, cmd.Stderr = out, out // one writer: exec serialises the writes
		cmd.Cancel = func() error {
			cmd.Process.Kill() // the first process of its namespace: the rest die with it
			return killGroup(cmd.Process.Pid)
		}
		// A process that escaped the process group (where no namespace
		// holds it) may keep the output pipe open; stop reading after
		// this long instead of waiting for it.
		cmd.WaitDelay = time.Second
		return cmd
	})
	if err == nil {
		err = cmd.Wait()
	}
	if cmd.Process != nil {
		// Background processes the command left behind die with it.
		killGroup(cmd.Process.Pid)
	}
	var exit *exec.ExitError
	switch {
	case err != nil && ctx.Err() != nil:
		return "", fmt.Errorf("run_command: stopped: %w; output so far:\n%s", ctx.Err(), out)
	case err != nil && runCtx.Err() != nil:
		return "", &shellTimeoutError{limit: s.timeout, output: out.String()}
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return withStatus(out, fmt.Sprintf("killed by signal: %v", ws.Signal())), nil
		}
		return withStatus(out, fmt.Sprintf("exit code %d", exit.ExitCode())), nil
	case errors.Is(err, exec.ErrWaitDelay):
		return withStatus(out, "exit code 0; processes it left running in the background were killed"), nil
	case err != nil:
		return "", fmt.Errorf("run_command: %w", err)
	}
	return withStatus(out, "exit code 0"), nil
}

// withStatus ends the output with the exit status on a line of its own.
func withStatus(out *cappedBuffer, status string) string {
	text := out.String()
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + "[" + status + "]"
}

// killGroup kills the process group led by pid.
func killGroup(pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	return os.ErrProcessDone
}

// shellTimeoutError is returned when a command runs past its time limit; it
// carries the output so far, so the model can see how far it got.
type shellTimeoutError struct {
	limit  time.Duration
	output string
}

func (e *shellTimeoutError) Error() string {
	return fmt.Sprintf("run_command: the command ran past the %v time limit and was killed with all its processes: make it quicker or split it into smaller steps; output so far:\n%s", e.limit, e.output)
}

// Unwrap lets errors.Is(err, context.DeadlineExceeded) find a timeout.
func (e *shellTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// cappedBuffer collects output up to max bytes, keeping the first and the
// last max/2 of it when there is more, so both the start and the final
// errors of a long build stay visible. It never fails a write: the command
// must not see a broken pipe because its output was cut.
type cappedBuffer struct {
	max   int
	head  []byte
	tail  []byte // the last bytes written after head filled
	total int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.total += len(p)
	rest := p
	if room := b.max - b.max/2 - len(b.head); room > 0 {
		n := min(room, len(rest))
		b.head = append(b.head, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		keep := b.max / 2
		b.tail = append(b.tail, rest...)
		if len(b.tail) > 2*keep+4096 { // trim now and then, not on every write
			b.tail = append(b.tail[:0], b.tail[len(b.tail)-keep:]...)
		}
	}
	return len(p), nil
}

// String returns the output, with a marker where bytes were cut.
func (b *cappedBuffer) String() string {
	if b.total == 0 {
		return "(no output)"
	}
	if b.total <= b.max {
		return string(b.head) + string(b.tail)
	}
	keep := b.max / 2
	tail := b.tail[len(b.tail)-keep:]
	cut := b.total - len(b.head) - len(tail)
	return fmt.Sprintf("%s\n[... %d bytes of output cut: showing the first %d and the last %d bytes of %d ...]\n%s",
		strings.ToValidUTF8(string(b.head), ""), cut, len(b.head), len(tail), b.total, strings.ToValidUTF8(string(tail), ""))
}
