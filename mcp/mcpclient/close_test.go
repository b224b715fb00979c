package mcpclient_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onionkit/onion/mcp/internal/mcptest"
	"github.com/onionkit/onion/mcp/mcpclient"
)

// alive reports whether the process pid still runs: it exists, is not a
// zombie waiting for a parent that will never reap it, and is not already
// on its way out (the kernel's PF_EXITING flag: it was killed, has closed
// its files, and is finishing its exit).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid flags ...: the
	// fields after the comm's closing parenthesis.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 7 || fields[0] == "Z" || fields[0] == "X" {
		return false
	}
	const pfExiting = 0x4
	flags, err := strconv.ParseUint(fields[6], 10, 64)
	return err != nil || flags&pfExiting == 0
}

// readPID reads the pid a server wrote to file.
func readPID(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the server wrote no pid: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestCloseEndsTheProcessGroup runs the test server the way npx runs a
// package, under a parent, and stubborn: it does not exit when its stdin
// closes and ignores SIGTERM. Close still ends both, and says nothing
// went wrong.
func TestCloseEndsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := mcptest.NpxStyleCommand(pidFile)
	cmd.Stderr = os.Stderr
	srv, err := mcpclient.ConnectCommand(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := toolMap(srv.Tools)["add"].Call(context.Background(), `{"a":1,"b":2}`); err != nil || out != "3" {
		t.Fatalf("add = %q, %v", out, err)
	}
	server, parent := readPID(t, pidFile), cmd.Process.Pid
	start := time.Now()
	err = srv.Close()
	t.Logf("Close took %v", time.Since(start))
	if err != nil {
		t.Errorf("close: %v; a normal close is no error", err)
	}
	for name, pid := range map[string]int{"npx-style parent": parent, "server": server} {
		if alive(pid) {
			t.Errorf("the %s (pid %d) still runs after Close", name, pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

// TestCommandCloseIsQuiet closes a server that exits when its stdin
// closes, as a well-behaved one does: no error.
func TestCommandCloseIsQuiet(t *testing.T) {
	cmd := mcptest.Command()
	srv, err := mcpclient.ConnectCommand(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if alive(cmd.Process.Pid) {
		t.Errorf("the server still runs after Close")
	}
}

// BenchmarkCloseStubbornServer measures how long Close takes to end a
// server that ignores its stdin closing and SIGTERM, with its parent.
func BenchmarkCloseStubbornServer(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		cmd := mcptest.NpxStyleCommand(filepath.Join(b.TempDir(), "pid"))
		srv, err := mcpclient.ConnectCommand(context.Background(), cmd)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := srv.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// nodeServer returns the path of an MCP server's bin installed by .ci/run
// (npm install into ONION_MCP_NODE_DIR, by default ~/.cache/onion/mcp-node),
// or skips the test saying how to install it.
func nodeServer(t *testing.T, bin string) (dir, path string) {
	t.Helper()
	dir = os.Getenv("ONION_MCP_NODE_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skipf("no ONION_MCP_NODE_DIR and no home directory: %v", err)
		}
		dir = filepath.Join(home, ".cache", "onion", "mcp-node")
	}
	path = filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not installed in %s (.ci/run installs it with npm): %v", bin, dir, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("%s needs node: %v", bin, err)
	}
	return dir, path
}

// TestEverythingNpm connects to the official server-everything from npm,
// started as the README starts it (npx, here without the network), calls
// a tool, and closes: quickly, without an error, and leaving no process.
func TestEverythingNpm(t *testing.T) {
	dir, _ := nodeServer(t, "mcp-server-everything")
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skipf("no npx: %v", err)
	}
	cmd := exec.Command(npx, "--no", "@modelcontextprotocol/server-everything")
	cmd.Dir = dir
	srv, err := mcpclient.ConnectCommand(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(srv.Name, "mcp-servers/everything") || !strings.Contains(srv.Name, "server-everything") {
		t.Errorf("server named %q; want its serverInfo name and its command", srv.Name)
	}
	tools := toolMap(srv.Tools)
	if out, err := tools["echo"].Call(context.Background(), `{"message":"onion"}`); err != nil || !strings.Contains(out, "onion") {
		t.Errorf("echo = %q, %v", out, err)
	}
	if _, ok := tools["simulate-research-query"]; ok {
		t.Error("simulate-research-query is offered, but it runs only as a task")
	}
	if tools["simulate_research_query"] != nil {
		t.Error("simulate_research_query is offered, but it runs only as a task")
	}
	var left []string
	for _, lo := range srv.LeftOut {
		left = append(left, lo.Tool)
	}
	if !strings.Contains(strings.Join(left, " "), "simulate-research-query") {
		t.Errorf("left out %v; want simulate-research-query among them", left)
	}
	pgid := cmd.Process.Pid
	start := time.Now()
	err = srv.Close()
	t.Logf("Close took %v", time.Since(start))
	if err != nil {
		t.Errorf("close: %v", err)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("processes of the server's group remain after Close (kill -0: %v)", err)
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// TestSequentialThinkingNpm connects to the official sequential-thinking
// server from npm, whose schema uses a list of types, and calls it.
func TestSequentialThinkingNpm(t *testing.T) {
	_, bin := nodeServer(t, "mcp-server-sequential-thinking")
	srv, err := mcpclient.ConnectCommand(context.Background(), exec.Command(bin))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	tool := toolMap(srv.Tools)["sequentialthinking"]
	if tool == nil || len(srv.LeftOut) != 0 {
		t.Fatalf("tools %v, left out %v", srv.Tools, srv.LeftOut)
	}
	out, err := tool.Call(context.Background(), `{"thought":"first","nextThoughtNeeded":false,"thoughtNumber":1,"totalThoughts":1}`)
	if err != nil || !strings.Contains(out, "thoughtNumber") {
		t.Errorf("sequentialthinking = %q, %v", out, err)
	}
}
