// Package mcptest holds the onion tools that the MCP bridges' tests serve
// and consume, and the switch that turns a test binary into a stdio MCP
// server of them, so that tests can run a real subprocess server.
package mcptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/onionkit/onion/mcp/mcpserver"
)

// ServeEnv is the environment variable that makes a test binary serve the
// test tools over stdio instead of running its tests (see ServeIfAsked).
const ServeEnv = "ONION_MCPTEST_SERVE"

// HangStarted is the line the served binary writes to stderr when a Hang
// call has begun, so that a test can kill it mid-call without sleeping.
const HangStarted = "mcptest: hang started"

// Items returns a fresh set of test tools: the funcs Add and Hang and a
// *Notes.
func Items() []any { return []any{Add, Hang, NewNotes()} }

// PIDFileEnv names a file where a server started by NpxStyleCommand writes
// the pid of the process that really serves, so that a test can check it
// is gone after Close.
const PIDFileEnv = "ONION_MCPTEST_PIDFILE"

// ServeIfAsked serves Items over stdio and exits, when ServeEnv is set;
// otherwise it returns at once. Call it first in TestMain.
//
// ServeEnv=npx behaves like npx: it starts the binary again as the real
// server (ServeEnv=stubborn), hands it its stdin and stdout, and waits for
// it. A stubborn server does what server-everything does when it expects
// roots: it does not exit when its stdin closes, and ignores SIGTERM.
func ServeIfAsked() {
	switch os.Getenv(ServeEnv) {
	case "":
		return
	case "npx":
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), ServeEnv+"=stubborn")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		if f := os.Getenv(PIDFileEnv); f != "" {
			if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
				fmt.Fprintln(os.Stderr, "mcptest:", err)
				os.Exit(1)
			}
		}
		_ = mcpserver.ServeStdio(context.Background(), Items()...)
		for { // until killed
			time.Sleep(time.Hour)
		}
	}
	err := mcpserver.ServeStdio(context.Background(), Items()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// NpxStyleCommand returns a command that runs the test tools' server the
// way npx runs a package: under a parent process, and (as server-everything
// did) not exiting when its stdin closes. The real server's pid goes to
// pidFile.
func NpxStyleCommand(pidFile string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ServeEnv+"=npx", PIDFileEnv+"="+pidFile)
	return cmd
}

// Command returns a command that runs the current test binary as a stdio
// MCP server of the test tools. Its stderr is the caller's to set.
func Command() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ServeEnv+"=1")
	return cmd
}

// Add returns the sum of a and b.
//
// a: the first number
// b: the second number
//
//onion:intent read
func Add(a, b int) int { return a + b }

// Hang starts a long job and waits until it is done or the call is
// canceled.
//
// job: what to start
func Hang(ctx context.Context, job string) (string, error) {
	fmt.Fprintln(os.Stderr, HangStarted)
	<-ctx.Done()
	return "", ctx.Err()
}

// Note is one entry of a Notes notebook.
type Note struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Notes is a notebook kept in memory. Its methods are tools.
type Notes struct {
	mu    sync.Mutex // guards notes
	notes map[string]string
}

// NewNotes returns an empty notebook.
func NewNotes() *Notes { return &Notes{notes: make(map[string]string)} }

// Save stores a note under its title, replacing any note of that title.
//
// title: the note's title
// body: the note's text
//
//onion:idempotent
func (n *Notes) Save(title, body string) (Note, error) {
	if title == "" {
		return Note{}, errors.New("notes: title is empty: give the note a title")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes[title] = body
	return Note{Title: title, Body: body}, nil
}

// Get returns the note with the given title.
//
// title: the note's title
//
//onion:intent read
func (n *Notes) Get(title string) (Note, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	body, ok := n.notes[title]
	if !ok {
		return Note{}, fmt.Errorf("notes: no note titled %q: list the titles first", title)
	}
	return Note{Title: title, Body: body}, nil
}

// Titles returns the titles of every note, sorted.
//
//onion:intent read
func (n *Notes) Titles() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	titles := make([]string, 0, len(n.notes))
	for t := range n.notes {
		titles = append(titles, t)
	}
	sort.Strings(titles)
	return titles
}

// Remove deletes the note with the given title.
//
// title: the note's title
//
//onion:intent delete
func (n *Notes) Remove(title string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.notes, title)
	return nil
}

// Explode always panics; it shows that a panicking tool cannot take the
// server down.
func (n *Notes) Explode() string { panic("kaboom") }
