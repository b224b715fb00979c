package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// bin is the onion command built for these tests.
var bin string

// TestMain builds the command once; every test runs it as a process, the
// way a user does. It is built with -trimpath, as a release is: its tools'
// doc comments come from the facts generated into it, and no source found
// where it runs may change them (TestToolsIgnorePlantedSource).
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "onion-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "onion")
	build := exec.Command("go", append(append([]string{"build", "-trimpath"}, buildFlags...), "-o", bin, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the onion command:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		// OpenCensus, which package gemini's SDK pulls in, starts its
		// worker when the program starts, whatever runs.
		if err := goleak.Find(goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli describes one run of the command.
type cli struct {
	env   []string // added to a clean environment: no model configured
	stdin string   // what stdin (a pipe) holds
	dir   string   // the working directory; a fresh one when empty
}

// outcome is how a run of the command ended.
type outcome struct {
	stdout, stderr string
	code           int
}

// cleanEnv is this process's environment without any model settings, and
// with proxies that lead nowhere, so that nothing a test runs can reach
// past the loopback interface (Go never proxies loopback addresses).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "OPENAI_API_KEY", "OPENAI_BASE_URL", "ONION_MODEL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HTTP_PROXY=http://127.0.0.1:1", "HTTPS_PROXY=http://127.0.0.1:1")
}

// command returns the command for args, set up as r says.
func (r cli) command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cleanEnv(), r.env...)
	cmd.Dir = r.dir
	if cmd.Dir == "" {
		cmd.Dir = t.TempDir()
	}
	cmd.Stdin = strings.NewReader(r.stdin)
	return cmd
}

// onion runs the command with args and returns how it ended.
func (r cli) onion(t *testing.T, args ...string) outcome {
	t.Helper()
	cmd := r.command(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("onion %q: %v", args, err)
	}
	return outcome{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// model is the environment of a model served at url, without a key.
func model(url string) []string { return []string{"OPENAI_BASE_URL=" + url} }

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
