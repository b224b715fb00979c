package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// silentServer is an -mcp command that starts, says so by writing its pid
// to pidFile, and never answers initialize.
func silentServer(pidFile string) string {
	return "sh -c 'echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + " && exec sleep 300'"
}

// waitForPid returns the pid written to file, failing the test when none
// comes within a minute.
func waitForPid(t *testing.T, file string, exited <-chan struct{}) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatal("onion ended before the server started")
		default:
		}
		if b, err := os.ReadFile(file); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond) // polling a file the child writes, not timing it
	}
	t.Fatal("the server never started")
	return 0
}

// gone reports whether the process pid has ended (or is a zombie nobody
// waits for, which holds nothing).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// TestMCPServerThatNeverAnswers: an -mcp server that never answers
// initialize cannot hold the command: Ctrl-C or SIGTERM ends it at once
// with status 130 and the server with it, for every command that starts
// servers; and -mcp-timeout ends the wait with an error that says so.
func TestMCPServerThatNeverAnswers(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, command := range []string{"tools", "chat", "call"} {
			t.Run(command+"/"+sig.String(), func(t *testing.T) {
				pidFile := filepath.Join(t.TempDir(), "pid")
				args := []string{command, "-mcp", silentServer(pidFile)}
				if command == "call" {
					args = append(args, "x", "{}")
				}
				cmd := cli{env: model("http://127.0.0.1:1/v1")}.command(t, args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan struct{})
				var waitErr error
				go func() { waitErr = cmd.Wait(); close(exited) }()
				pid := waitForPid(t, pidFile, exited)
				cmd.Process.Signal(sig)
				select {
				case <-exited:
				case <-time.After(30 * time.Second):
					cmd.Process.Kill()
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("onion %s did not end within 30s of %s", command, sig)
				}
				var exit *exec.ExitError
				if !errors.As(waitErr, &exit) || exit.ExitCode() != exitInterrupted {
					t.Errorf("onion %s ended with %v, want status %d; stderr %q", command, waitErr, exitInterrupted, stderr.String())
				}
				if !gone(pid) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("the server (pid %d) outlived onion %s", pid, command)
				}
			})
		}
	}
	t.Run("timeout", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		got := cli{}.onion(t, "tools", "-mcp-timeout", "200ms", "-mcp", silentServer(pidFile))
		if got.code != exitFailed || !strings.Contains(got.stderr, "no answer within 200ms (-mcp-timeout)") {
			t.Errorf("exit %d, stderr %q", got.code, got.stderr)
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 && !gone(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the server (pid %d) outlived onion", pid)
			}
		}
	})
}
