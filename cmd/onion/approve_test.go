package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/onionkit/onion/internal/visible"
)

// TestApprovalShowsWhatRuns asks at a terminal about calls whose
// arguments try to hide what runs: padding that pushes "; touch made" past
// a cut, and runes that a terminal would act on or reorder instead of
// showing. The question shows every byte, escaped; arguments too long to
// show are not asked about but denied, saying how to allow them.
func TestApprovalShowsWhatRuns(t *testing.T) {
	padded := `{"command":"echo ` + strings.Repeat("a", 600) + `; touch made"}`
	tricky := "{\"command\":\"echo \\u001b[2K\\r\u202e\u009b2K\u2066; touch made\"}"
	for _, c := range []struct {
		name, args string
		shown      string // the question, or "" for none
		after      string // what onion call writes after the question, or instead of it
	}{
		{"Padded", padded, padded, "onion call: run_command was not run: the approver said no"},
		{"Escapes", tricky, `{"command":"echo \u001b[2K\r\u202e\u009b2K\u2066; touch made"}`, "onion call: run_command was not run: the approver said no"},
		{"TooLong", `{"command":"echo ` + strings.Repeat("a", visible.MaxArguments) + `; touch made"}`, "",
			"onion call: run_command was not run: approver failed: the arguments are 32799 bytes as shown, too long to show (at most 32768): allow it with -approve run_command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := cli{dir: dir}.command(t, "call", "-tools", "shell", "run_command", c.args)
			cmd.Stdin = nil
			f, err := pty.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			defer cmd.Process.Kill()
			term := newTerminal(t, f)
			if c.shown != "" {
				term.expect("The agent wants to run run_command (write) with ")
				term.expectNext(c.shown + "\r\nAllow? [y/N] ")
				term.typeLine("n")
				term.expectNext("n\r\n")
			}
			term.expect(c.after)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != exitDenied {
				t.Errorf("exit %d, want %d", code, exitDenied)
			}
			if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
				t.Error("the denied command ran")
			}
			term.mu.Lock()
			defer term.mu.Unlock()
			if strings.Contains(string(term.out), "Allow?") != (c.shown != "") {
				t.Errorf("asked: %v, want %v; the terminal read:\n%q", !(c.shown != ""), c.shown != "", term.out)
			}
		})
	}
}
