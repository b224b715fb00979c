package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// The exit statuses, as the package doc lists them.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInvalidArgs = 3
	exitToolFailed  = 4
	exitDenied      = 5
	exitInterrupted = 130
)

// A command is one of onion's subcommands.
type command struct {
	name    string
	args    string // what follows the flags in the usage line
	summary string
	// operand names, in the error for a flag placed after them, what
	// follows the flags ("the prompt"); empty for a command that takes
	// no arguments.
	operand string
	// run does the command with the parsed flags and the arguments after
	// them, and returns the exit status.
	run func(ctx context.Context, fs *flag.FlagSet) int
	// flags registers the command's flags.
	flags func(fs *flag.FlagSet)
}

// commands are the subcommands, in the order the help lists them.
var commands = []*command{toolsCommand(), callCommand(), runCommand(), chatCommand(), serveCommand(), devCommand()}

const overview = `onion runs onion agents and their tools from the terminal.

Usage:

	onion COMMAND [flags] [arguments]

Commands:
%s
The tools come from -tools (built-in tools), -mcp (MCP servers to start)
and -script (Starlark files). The model comes from OPENAI_API_KEY,
OPENAI_BASE_URL and ONION_MODEL, or from -model and -base-url.

Exit status: 0 success, 1 failure, 2 a usage mistake or no model
configured, 3 invalid tool arguments (call), 4 the tool failed (call),
5 approval denied (call), 130 interrupted.

Run 'onion COMMAND -h' for the flags of a command.
`

func main() { os.Exit(run(os.Args[1:])) }

// run runs onion with args (the command line less the program's name) and
// returns the exit status.
func run(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		w := io.Writer(os.Stdout)
		status := exitOK
		if len(args) == 0 {
			w, status = os.Stderr, exitUsage
		}
		fmt.Fprintf(w, overview, commandList())
		return status
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.main(args[1:])
		}
	}
	fmt.Fprintf(os.Stderr, "onion: unknown command %q\n\n"+overview, args[0], commandList())
	return exitUsage
}

func commandList() string {
	var b strings.Builder
	for _, c := range commands {
		fmt.Fprintf(&b, "\t%-6s %s\n", c.name, c.summary)
	}
	return b.String()
}

// main parses the command's flags and runs it. -h prints its help (on
// stderr, as Go's own commands do) and exits 0.
func (c *command) main(args []string) int {
	fs := flag.NewFlagSet("onion "+c.name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	c.flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: onion %s [flags] %s\n\n%s.\n", c.name, c.args, upperFirst(c.summary))
		if c.operand != "" {
			fmt.Fprintf(fs.Output(), "\nThe flags go before %[1]s: an argument after it that names one of them\nis refused, unless -- ends the flags (onion %[2]s -- ARGS...).\n", c.operand, c.name)
		}
		fmt.Fprintf(fs.Output(), "\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK // the flag package printed the help
		}
		return exitUsage
	}
	rest := fs.Args()
	if c.operand != "" && !endedByDashes(fs, args[:len(args)-len(rest)]) {
		if err := c.misplacedFlags(fs, rest); err != nil {
			return fail(c.name, err)
		}
	}
	return c.run(context.Background(), fs)
}

// misplacedFlags returns a usage error when an argument in rest, what
// follows the flags, names one of the command's flags: the flag package
// stops at the first argument that is not a flag, so "onion run hi -json"
// would send "hi -json" as the prompt. The error shows the command line
// with the flags moved in front. A word that starts with '-' but names no
// flag ("what does -race do?") is left to be an argument.
func (c *command) misplacedFlags(fs *flag.FlagSet, rest []string) error {
	var flags, others []string
	for i := 0; i < len(rest); i++ {
		f, ok := namedFlag(fs, rest[i])
		if !ok {
			others = append(others, rest[i])
			continue
		}
		flags = append(flags, rest[i])
		if f != nil && !isBoolFlag(f) && !strings.Contains(rest[i], "=") && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	if len(flags) == 0 {
		return nil
	}
	return usageError{fmt.Errorf("flags go before %s: onion %s %s; to pass %s as written, not as a flag, end the flags with --: onion %s [flags] -- %s",
		c.operand, c.name, shellJoin(append(flags, others...)), shellJoin(flags[:1]), c.name, shellJoin(rest))}
}

// endedByDashes reports whether the flags fs parsed from parsed, all of
// them valid, end with a -- of their own rather than a flag's value "--"
// (-system --).
func endedByDashes(fs *flag.FlagSet, parsed []string) bool {
	for i := 0; i < len(parsed); i++ {
		if parsed[i] == "--" {
			return true
		}
		if f, _ := namedFlag(fs, parsed[i]); f != nil && !isBoolFlag(f) && !strings.Contains(parsed[i], "=") {
			i++ // its value
		}
	}
	return false
}

// namedFlag reports whether arg is a flag of fs (-name, --name, -name=v),
// or -h or -help, and returns the flag (nil for help).
func namedFlag(fs *flag.FlagSet, arg string) (*flag.Flag, bool) {
	name, ok := strings.CutPrefix(arg, "-")
	if !ok {
		return nil, false
	}
	name = strings.TrimPrefix(name, "-")
	name, _, _ = strings.Cut(name, "=")
	if f := fs.Lookup(name); f != nil {
		return f, true
	}
	return nil, name == "h" || name == "help"
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// shellJoin joins args into a command line a POSIX shell splits back
// into them, quoting those that need it.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		safe := a != ""
		for _, r := range a {
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:@%+", r) {
				safe = false
				break
			}
		}
		quoted[i] = a
		if !safe {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fail reports err of the command name on stderr and returns its exit
// status: 2 for a usage mistake, else 1.
func fail(name string, err error) int {
	if errors.Is(err, errInterrupted) {
		return interrupted(name)
	}
	// The library's errors start "onion: " too; the command's name says it.
	fmt.Fprintf(os.Stderr, "onion %s: %s\n", name, strings.TrimPrefix(err.Error(), "onion: "))
	if isUsage(err) {
		return exitUsage
	}
	return exitFailed
}
