package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/atomicfile"
)

func runCommand() *command {
	var src sources
	var mf modelFlags
	var asJSON bool
	c := &command{
		name:    "run",
		args:    "PROMPT",
		operand: "the prompt",
		summary: "run the agent on one prompt: the answer streams to stdout, the tool calls show on stderr",
		flags: func(fs *flag.FlagSet) {
			src.register(fs)
			mf.register(fs)
			fs.BoolVar(&asJSON, "json", false, "print the run's Result as JSON on stdout at the end, instead of streaming the answer")
		},
	}
	c.run = func(ctx context.Context, fs *flag.FlagSet) int {
		prompt := strings.TrimSpace(strings.Join(fs.Args(), " "))
		if prompt == "" {
			fs.Usage()
			return exitUsage
		}
		ctx, stop := interruptible(ctx)
		defer stop()
		s, err := startSession(ctx, &src, &mf)
		if err != nil {
			return fail(c.name, err)
		}
		defer s.close()
		var out io.Writer = os.Stdout
		if asJSON {
			out = nil
		}
		res, err := s.turn(ctx, prompt, out)
		if err == nil && mf.session != "" {
			err = saveHistory(s.conv, mf.session)
		}
		if asJSON && res != nil {
			b, jerr := resultJSON(res)
			if jerr != nil {
				return fail(c.name, jerr)
			}
			fmt.Printf("%s\n", b)
		}
		switch {
		case ctx.Err() != nil:
			return interrupted(c.name)
		case err != nil:
			return fail(c.name, err)
		}
		return exitOK
	}
	return c
}

// session is an agent with its conversation and the terminal it talks
// through, as run and chat use them.
type session struct {
	agent  *onion.Agent
	conv   *onion.Conversation
	status *status
	lines  *lineReader // nil when stdin is not a terminal
	// stdoutTTY says whether stdout is a terminal, where the answer and
	// the status lines share the screen.
	stdoutTTY bool
}

// startSession builds the agent the flags describe, with its conversation
// loaded from -session when that file exists.
func startSession(ctx context.Context, src *sources, mf *modelFlags) (*session, error) {
	opts, err := mf.options()
	if err != nil {
		return nil, err
	}
	s := &session{
		status:    &status{w: os.Stderr, tty: isTerminal(os.Stderr)},
		stdoutTTY: isTerminal(os.Stdout),
	}
	if isTerminal(os.Stdin) {
		s.lines = newLineReader(os.Stdin)
	}
	ap := newApprover(mf.approve, s.lines, s.status)
	s.agent, err = src.load(ctx, append(opts, onion.Approver(ap.approve))...)
	if err != nil {
		return nil, err
	}
	if err := ap.check(s.agent.Tools()); err != nil {
		s.agent.Close()
		return nil, err
	}
	s.conv = s.agent.NewConversation()
	if mf.session != "" {
		if err := loadHistory(s.conv, mf.session); err != nil {
			s.agent.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *session) close() {
	s.status.close()
	s.agent.Close()
}

// turn runs one prompt through the conversation, streaming the answer to
// out (nothing when out is nil) and the tool calls to stderr, and returns
// the Result, partial when the run failed or was canceled.
func (s *session) turn(ctx context.Context, prompt string, out io.Writer) (*onion.Result, error) {
	var res *onion.Result
	midLine := false // the answer's last line is not ended yet
	endLine := func() {
		if midLine && out != nil {
			io.WriteString(out, "\n")
			midLine = false
		}
	}
	defer s.status.stop()
	for ev, err := range s.conv.Stream(ctx, prompt) {
		switch ev.Kind {
		case onion.EventIteration:
			s.status.spin("thinking")
		case onion.EventTextDelta:
			s.status.stop()
			if out != nil && ev.Text != "" {
				io.WriteString(out, ev.Text)
				midLine = !strings.HasSuffix(ev.Text, "\n")
			}
		case onion.EventToolStarted, onion.EventToolFinished:
			if s.stdoutTTY {
				// On a screen, a status line must not join the
				// answer's; in a pipe the answer stays as it came.
				endLine()
			}
			if ev.Kind == onion.EventToolStarted {
				s.status.started(ev.Call)
			} else {
				s.status.finished(ev.Call)
			}
		case onion.EventDone:
			res = ev.Result
		}
		if err != nil {
			endLine()
			return res, err
		}
	}
	endLine()
	return res, nil
}

// maxSession bounds a session file: some thousands of long turns with
// their tool results, and no more memory than a run can spare. A variable
// so that tests can lower it.
var maxSession int64 = 16 << 20

// loadHistory restores the conversation saved in path, if there is one.
// It reads a regular file of at most maxSession bytes (a pipe or a device
// is refused, not waited on or read without end), and the conversation
// refuses a history no run could have kept (Conversation.UnmarshalHistory).
func loadHistory(conv *onion.Conversation, path string) error {
	data, err := atomicfile.ReadFile(path, maxSession)
	if errors.Is(err, fs.ErrNotExist) {
		// A new session: its directory must take it, which is known now,
		// before the run has done anything, rather than at the save.
		dir := filepath.Dir(path)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("session %s: its directory %s does not exist: create it, or give another path", path, dir)
		}
		f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check-*")
		if err != nil {
			return fmt.Errorf("session %s: the file cannot be written there (%w): give another path", path, err)
		}
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	if err != nil {
		return fmt.Errorf("load the session: %w: give a file saved by -session or /save", err)
	}
	if err := conv.UnmarshalHistory(data); err != nil {
		return fmt.Errorf("session %s: %w: fix or move the file, or give another", path, err)
	}
	return nil
}

// saveHistory writes the conversation to path, whole or not at all: to a
// temporary file beside it, then renamed over it.
func saveHistory(conv *onion.Conversation, path string) error {
	data, err := conv.MarshalHistory()
	if err != nil {
		return fmt.Errorf("encode the session: %w", err)
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("save the session: %w", err)
	}
	return nil
}
