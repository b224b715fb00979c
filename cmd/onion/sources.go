package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/shlex"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin"
	_ "github.com/onionkit/onion/builtin/browser"  // lets builtin.Tools build "browser"
	_ "github.com/onionkit/onion/builtin/webfetch" // lets builtin.Tools build "web_fetch"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/script"
)

// builtinHelp says what each name -tools takes stands for.
const builtinHelp = "the built-in tools to offer, `names` separated by commas:" + `
  todo        add, list, complete, remove on a fresh todo list
  files       read_file, write_file, list_files, glob, grep, delete_file
              (asked about first), confined to the current directory
  memory      remember, recall, forget, memories, kept in this process
  shell       run_command, asking for approval before every command
  web_search  web_search (needs SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY)
  web_fetch   web_fetch, public http(s) pages as Markdown
  browser     goto, page_text, click, type_text, screenshot and the tab
              tools, in a headless Chromium started on first use`

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, " ") }

func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// sources are the flags that choose the tools, shared by every command.
type sources struct {
	dir           string
	builtins      string
	mcp           repeated
	scripts       repeated
	scriptURL     string
	scriptHeaders repeated
	mcpTimeout    time.Duration
	toolTimeout   time.Duration

	// servers are the MCP servers load connected, for what their tools'
	// listings say (ServerApproves).
	servers []*mcpclient.Server
}

// serverApproves reports whether the MCP server that offers the tool
// named name asks its own user before it runs.
func (s *sources) serverApproves(name string) bool {
	for _, srv := range s.servers {
		if srv.ServerApproves(name) {
			return true
		}
	}
	return false
}

// defaultMCPTimeout is how long an -mcp server may take to start, answer
// initialize and list its tools: npx fetching a package is the slow case.
const defaultMCPTimeout = time.Minute

func (s *sources) register(fs *flag.FlagSet) {
	fs.StringVar(&s.dir, "C", "", "change to `DIR` first: the files tools are confined to it and the shell runs there (-script paths stay relative to where onion started)")
	fs.StringVar(&s.builtins, "tools", "", builtinHelp)
	fs.Var(&s.mcp, "mcp", "an MCP server to start, as `'command args…'` (split like a shell would); its tools are offered (repeatable)")
	fs.DurationVar(&s.mcpTimeout, "mcp-timeout", defaultMCPTimeout, "how long each -mcp server may take to start and list its tools")
	fs.Var(&s.scripts, "script", "a Starlark `file.star` whose functions are tools (repeatable; see go doc github.com/onionkit/onion/script)")
	fs.StringVar(&s.scriptURL, "script-url", "", "the `URL` every request of the -script tools goes to")
	fs.Var(&s.scriptHeaders, "script-header", "a header `'Name: value'` sent with every request of the -script tools, never shown to them (repeatable)")
	fs.DurationVar(&s.toolTimeout, "tool-timeout", onion.DefaultToolTimeout, "cut each tool call off after `D`, such as 30s or 1h; 0 for no limit")
}

// flagsText is the source flags as given, quoted for a shell, to show the
// command line of a next step.
func (s *sources) flagsText() string {
	var parts []string
	if s.dir != "" {
		parts = append(parts, "-C", shellQuote(s.dir))
	}
	if s.builtins != "" {
		parts = append(parts, "-tools", shellQuote(s.builtins))
	}
	for _, m := range s.mcp {
		parts = append(parts, "-mcp", shellQuote(m))
	}
	for _, sc := range s.scripts {
		parts = append(parts, "-script", shellQuote(sc))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,._-/:=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// empty reports whether no source was chosen.
func (s *sources) empty() bool {
	return s.builtins == "" && len(s.mcp) == 0 && len(s.scripts) == 0
}

// load builds the chosen tools into an agent with opts. The agent owns
// every tool, MCP sessions and open directories included: Close releases
// them.
func (s *sources) load(ctx context.Context, opts ...onion.Option) (*onion.Agent, error) {
	var items []any
	var servers []*mcpclient.Server
	abort := func(err error) (*onion.Agent, error) {
		for _, srv := range servers {
			srv.Close()
		}
		return nil, err
	}
	scripts := make([]string, len(s.scripts))
	for i, path := range s.scripts {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("-script %s: %w", path, err)
		}
		scripts[i] = abs
	}
	if s.dir != "" {
		if err := os.Chdir(s.dir); err != nil {
			return nil, usageError{fmt.Errorf("-C: %w", err)}
		}
	}
	if s.builtins != "" {
		for _, ref := range strings.Split(s.builtins, ",") {
			switch ref = strings.TrimSpace(ref); ref {
			case "":
			case "files":
				// A model that deletes a file cannot take it back: the
				// command asks first (-approve delete_file says yes ahead).
				f, err := builtin.NewFiles(".")
				if err != nil {
					return abort(fmt.Errorf("-tools files: %w", err))
				}
				tools, err := onion.ToolsFrom(f, onion.Method("DeleteFile", onion.RequireApproval()))
				if err != nil {
					f.Close()
					return abort(fmt.Errorf("-tools files: %w", err))
				}
				items = append(items, tools) // the agent closes f with them
			default:
				tools, err := builtin.Tools(ref)
				if err != nil {
					return abort(usageError{fmt.Errorf("-tools: %w", err)})
				}
				items = append(items, tools)
			}
		}
	}
	for _, command := range s.mcp {
		argv, err := shlex.Split(command)
		if err != nil || len(argv) == 0 {
			return abort(usageError{fmt.Errorf("-mcp %q: want a command and its arguments", command)})
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stderr = os.Stderr
		srv, err := s.connect(ctx, cmd)
		if err != nil {
			return abort(fmt.Errorf("-mcp %q: %w", command, err))
		}
		servers = append(servers, srv)
		items = append(items, srv.Tools)
	}
	scriptOpts, err := s.scriptOptions()
	if err != nil {
		return abort(err)
	}
	for i, path := range scripts {
		tools, err := script.Load(path, scriptOpts...)
		if err != nil {
			return abort(fmt.Errorf("-script %s: %w", s.scripts[i], err))
		}
		items = append(items, tools)
	}
	opts = append([]onion.Option{onion.ToolTimeout(s.toolTimeout)}, opts...)
	agent, err := onion.NewAgent("onion", append(items, anys(opts)...)...)
	if err != nil {
		// Two tools of one name, or a flag's value the agent refuses.
		return abort(usageError{err})
	}
	s.servers = servers
	return agent, nil
}

// connect starts the MCP server cmd and lists its tools, within
// -mcp-timeout; Ctrl-C or SIGTERM meanwhile ends it (and the server, with
// every process it started) with errInterrupted, so that a server that
// never answers cannot hold the command.
func (s *sources) connect(ctx context.Context, cmd *exec.Cmd) (*mcpclient.Server, error) {
	ctx, stop := interruptible(ctx)
	defer stop()
	timeout := s.mcpTimeout
	if timeout <= 0 {
		timeout = defaultMCPTimeout
	}
	connectCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	srv, err := mcpclient.ConnectCommand(connectCtx, cmd)
	switch {
	case err == nil:
		return srv, nil
	case ctx.Err() != nil:
		return nil, errInterrupted
	case errors.Is(connectCtx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("no answer within %s (-mcp-timeout): %w", timeout, err)
	}
	return nil, err
}

// scriptOptions are the options -script-url and -script-header give.
func (s *sources) scriptOptions() ([]script.Option, error) {
	var opts []script.Option
	if s.scriptURL != "" {
		opts = append(opts, script.BaseURL(s.scriptURL))
	}
	for _, h := range s.scriptHeaders {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, usageError{fmt.Errorf("-script-header %q: want 'Name: value'", h)}
		}
		opts = append(opts, script.Header(strings.TrimSpace(name), strings.TrimSpace(value)))
	}
	return opts, nil
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// usageError is a mistake in the command line: the command exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// isUsage reports whether err is a mistake in the command line.
func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
