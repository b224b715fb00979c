package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/onionkit/onion"
)

const chatHelp = `type a prompt, or one of:
  /tools       the tools the agent has
  /history     the conversation so far
  /reset       start the conversation again
  /save FILE   save the conversation to FILE (load it with -session FILE)
  /exit        leave (so does Ctrl-D)
Ctrl-C stops the answer being written; at the prompt it leaves.`

func chatCommand() *command {
	var src sources
	var mf modelFlags
	c := &command{
		name:    "chat",
		args:    "",
		summary: "talk with the agent: run's prompts in a loop, with /tools, /history, /reset and /save FILE",
		flags: func(fs *flag.FlagSet) {
			src.register(fs)
			mf.register(fs)
		},
	}
	c.run = func(ctx context.Context, fs *flag.FlagSet) int {
		if fs.NArg() > 0 {
			return fail(c.name, usageError{fmt.Errorf("unexpected arguments %q: chat reads its prompts from the terminal", fs.Args())})
		}
		interrupts := make(chan os.Signal, 1)
		signal.Notify(interrupts, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(interrupts)
		s, err := startSession(ctx, &src, &mf)
		if err != nil {
			return fail(c.name, err)
		}
		defer s.close()
		prompts := s.lines
		if prompts == nil {
			prompts = newLineReader(os.Stdin)
		}
		s.status.printf("onion chat with %d tools; /help for the commands\n", s.agent.Tools().Len())
		for {
			s.status.printf("> ")
			waitCtx, stopWaiting, interrupted := untilInterrupt(ctx, interrupts)
			line, err := prompts.next(waitCtx)
			stopWaiting()
			switch {
			case interrupted():
				s.status.printf("\n")
				return exitInterrupted
			case errors.Is(err, io.EOF):
				s.status.printf("\n")
				return exitOK
			case err != nil:
				return fail(c.name, err)
			}
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "/") {
				if done := s.chatCommand(line, mf.session); done {
					return exitOK
				}
				continue
			}
			if line == "" {
				continue
			}
			turnCtx, stopTurn, interrupted := untilInterrupt(ctx, interrupts)
			_, err = s.turn(turnCtx, line, os.Stdout)
			stopTurn()
			switch {
			case interrupted():
				s.status.printf("(interrupted)\n")
			case err != nil:
				s.status.printf("onion chat: %v\n", err)
			case mf.session != "":
				if err := saveHistory(s.conv, mf.session); err != nil {
					s.status.printf("onion chat: %v\n", err)
				}
			}
		}
	}
	return c
}

// untilInterrupt returns ctx canceled when a signal arrives on sig (or
// when stop is called), and a func that reports whether a signal did it.
func untilInterrupt(ctx context.Context, sig <-chan os.Signal) (_ context.Context, stop func(), interrupted func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	got := make(chan bool, 1)
	go func() {
		select {
		case <-sig:
			got <- true
			cancel()
		case <-ctx.Done():
			got <- false
		}
	}()
	var was, known bool
	stop = func() {
		cancel()
		if !known {
			was, known = <-got, true
		}
	}
	return ctx, stop, func() bool { stop(); return was }
}

// chatCommand does one of chat's slash commands and reports whether chat
// should end.
func (s *session) chatCommand(line, sessionFile string) (done bool) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/exit", "/quit":
		return true
	case "/help":
		s.status.printf("%s\n", chatHelp)
	case "/tools":
		for _, t := range s.agent.Tools().All() {
			fmt.Printf("%s (%s): %s\n", t.Name(), t.Intent(), short(t.Description(), 100))
		}
	case "/history":
		writeHistory(os.Stdout, s.conv.History())
	case "/reset":
		s.conv.Reset()
		s.status.printf("(the conversation is empty again)\n")
	case "/save":
		if arg == "" {
			arg = sessionFile
		}
		if arg == "" {
			s.status.printf("/save needs a file: /save FILE\n")
			return false
		}
		if err := saveHistory(s.conv, arg); err != nil {
			s.status.printf("onion chat: %v\n", err)
			return false
		}
		s.status.printf("(saved to %s)\n", arg)
	default:
		s.status.printf("unknown command %s; %s\n", name, chatHelp)
	}
	return false
}

// writeHistory prints a conversation for people, one line a message.
func writeHistory(w io.Writer, msgs []onion.Message) {
	if len(msgs) == 0 {
		fmt.Fprintln(w, "(no messages yet)")
	}
	for _, m := range msgs {
		switch {
		case m.Role == onion.RoleTool:
			fmt.Fprintf(w, "tool %s: %s\n", m.Name, short(m.Content, 200))
		case len(m.ToolCalls) > 0:
			if m.Content != "" {
				fmt.Fprintf(w, "%s: %s\n", m.Role, m.Content)
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(w, "%s → %s %s\n", m.Role, c.Name, short(compactJSON(c.Arguments), 200))
			}
		default:
			fmt.Fprintf(w, "%s: %s\n", m.Role, m.Content)
		}
	}
}
