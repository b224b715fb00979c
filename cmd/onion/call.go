package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/mcp/mcpclient"
)

func callCommand() *command {
	var src sources
	var approve string
	c := &command{
		name:    "call",
		args:    `TOOL ['{"json":"arguments"}']`,
		operand: "the tool's name",
		summary: "run one tool with JSON arguments, exactly as a model's call runs it, and print what the model would read",
		flags: func(fs *flag.FlagSet) {
			src.register(fs)
			fs.StringVar(&approve, "approve", "", "allow these `tools` (comma-separated names) without asking; when stdin is not a terminal a call that needs approval is denied otherwise")
		},
	}
	c.run = func(ctx context.Context, fs *flag.FlagSet) int {
		switch {
		case fs.NArg() == 0:
			return fail(c.name, usageError{errors.New("no tool named: give the tool's name and, optionally, its arguments as JSON, as in onion call -tools todo add '{\"text\":\"buy milk\"}' (onion call -h for the flags)")})
		case fs.NArg() > 2:
			return fail(c.name, usageError{fmt.Errorf("%d arguments after the flags (%q): give the tool's name and its arguments as one JSON text, quoted for the shell", fs.NArg(), fs.Args())})
		case src.empty():
			return fail(c.name, errNoTools)
		}
		name, args := fs.Arg(0), "{}"
		if fs.NArg() == 2 {
			args = fs.Arg(1)
		}
		ctx, stop := interruptible(ctx)
		defer stop()
		agent, err := src.load(ctx)
		if err != nil {
			return fail(c.name, err)
		}
		defer agent.Close()
		tool, ok := agent.Tools().Get(name)
		if !ok {
			return fail(c.name, usageError{fmt.Errorf("no tool %q: the tools are %s", name, strings.Join(agent.Tools().Names(), ", "))})
		}
		st := &status{w: os.Stderr}
		var lines *lineReader
		if isTerminal(os.Stdin) {
			lines = newLineReader(os.Stdin)
		}
		ap := newApprover(approve, lines, st)
		if err := ap.check(agent.Tools()); err != nil {
			return fail(c.name, err)
		}
		call := onion.Call{ID: "call_onion", Name: tool.Name(), Intent: tool.Intent(), Arguments: rawArguments(args), Attempt: 1}
		cfg := drive.CallConfig{Approver: ap.approve}
		if ok, reason := cfg.Approve(ctx, tool, call); !ok {
			if ctx.Err() != nil {
				return interrupted(c.name)
			}
			fmt.Fprintf(os.Stderr, "onion call: %s was not run: %s\n", name, reason)
			return exitDenied
		}
		timeout := drive.CallConfigOf(agent).Timeout // -tool-timeout
		out, err := callBounded(ctx, tool, args, timeout)
		switch {
		case ctx.Err() != nil:
			if err == nil {
				printText(out)
			}
			return interrupted(c.name)
		case errors.Is(err, errCallTimedOut):
			fmt.Fprintf(os.Stderr, "onion call: %s was cut off after %v: give a longer -tool-timeout, or 0 for no limit\n", name, timeout)
			return exitToolFailed
		case errors.Is(err, mcpclient.ErrDeniedByServer):
			fmt.Fprintf(os.Stderr, "onion call: %s was not run: the MCP server denied it: %v\n", name, err)
			return exitDenied
		case errors.Is(err, onion.ErrInvalidArguments):
			fmt.Fprintf(os.Stderr, "onion call: %v\n", err)
			return exitInvalidArgs
		case err != nil:
			fmt.Fprintf(os.Stderr, "onion call: %v\n", err)
			return exitToolFailed
		}
		printText(out)
		return exitOK
	}
	return c
}

// errCallTimedOut is a call cut off by -tool-timeout.
var errCallTimedOut = errors.New("the call timed out")

// errCallExited is a call whose tool ended its goroutine without
// returning, as the agent loop words it.
var errCallExited = errors.New("the tool was cut off: it ended its goroutine (runtime.Goexit) without returning")

// callBounded runs tool with args, cut off after timeout (none if 0), as
// the agent loop cuts a call off: a tool that ignores its context is left
// running, and ends with the process.
func callBounded(ctx context.Context, tool *onion.Tool, args string, timeout time.Duration) (string, error) {
	callCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		r := result{err: errCallExited}
		defer func() { done <- r }() // sent however the tool ends, runtime.Goexit included
		r.out, r.err = tool.Call(callCtx, args)
	}()
	var r result
	select {
	case r = <-done:
	case <-callCtx.Done():
		r.err = callCtx.Err()
	}
	if r.err != nil && callCtx.Err() != nil && ctx.Err() == nil {
		return "", errCallTimedOut
	}
	return r.out, r.err
}

// rawArguments is args as an approver sees them: the JSON as it is, or a
// JSON string of the text when it is not JSON, as drive.CallOf makes it.
func rawArguments(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// printText writes text to stdout, ending with a newline.
func printText(text string) {
	if text == "" {
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	os.Stdout.WriteString(text)
}

// interruptible returns ctx canceled by the first Ctrl-C (SIGINT) or
// SIGTERM. After it a second Ctrl-C ends the process at once, as it would
// without onion.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// errInterrupted ends a command that Ctrl-C or SIGTERM stopped before it
// had anything to cancel cleanly, such as an -mcp server still starting.
var errInterrupted = errors.New("interrupted")

// interrupted says that the command was interrupted and returns 130, the
// status a shell gives a program ended by Ctrl-C.
func interrupted(name string) int {
	fmt.Fprintf(os.Stderr, "onion %s: interrupted\n", name)
	return exitInterrupted
}
