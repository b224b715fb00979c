package main

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/shlex"
)

// shellRE finds the shell commands a document shows: the lines of its sh
// blocks, and inline code that starts with a command a reader would type.
var (
	shBlockRE = regexp.MustCompile("(?s)```(?:sh|bash)\n(.*?)```")
	inlineRE  = regexp.MustCompile("`((?:go (?:run|test|install|generate) |onion (?:tools|call|run|chat|serve)\\b)[^`\n]*)`")
)

// shellCommands returns the commands of doc, one per line, comments cut.
func shellCommands(doc string) []string {
	var out []string
	for _, m := range shBlockRE.FindAllStringSubmatch(doc, -1) {
		for _, l := range strings.Split(m[1], "\n") {
			l = strings.TrimSpace(l)
			if i := strings.Index(l, "  #"); i >= 0 {
				l = strings.TrimSpace(l[:i])
			}
			if l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
	}
	for _, m := range inlineRE.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReadmeCommands checks every shell command the README and the
// command's doc show: each `go run` names a main package from the
// directory it runs in, each `go test`/`go install` a package that exists,
// and each onion command line parses with that command's flags.
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var godoc []string // the indented lines of the package doc
	for _, l := range strings.Split(string(doc), "\n") {
		if rest, ok := strings.CutPrefix(l, "//\t"); ok && strings.HasPrefix(rest, "onion ") && !strings.Contains(rest, "[") {
			godoc = append(godoc, strings.TrimSpace(rest))
		}
	}
	cmds := append(shellCommands(string(readme)), godoc...)
	if len(cmds) < 15 {
		t.Fatalf("found %d commands, want at least 15: %q", len(cmds), cmds)
	}
	for _, line := range cmds {
		for _, c := range strings.Split(line, "&&") {
			checkCommand(t, "../..", line, strings.Trim(strings.TrimSpace(c), "()"))
		}
	}
}

// envRE matches the NAME=value words that may precede a command.
var envRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// checkCommand checks one command c of line, run in dir; a "cd" moves dir
// for the commands after it, as in "(cd temporal && go run ./x)".
func checkCommand(t *testing.T, dir, line, c string) {
	t.Helper()
	c = strings.NewReplacer("…", "X", "/...", "/\x00", "...", "X").Replace(c) // placeholders, but ./...
	args, err := shlex.Split(strings.ReplaceAll(c, "\x00", "..."))
	if err != nil {
		t.Errorf("%q: %v", line, err)
		return
	}
	for len(args) > 0 && envRE.MatchString(args[0]) {
		args = args[1:]
	}
	if len(args) == 0 {
		return
	}
	switch {
	case args[0] == "cd" && len(args) == 2:
		// handled by the caller's split: commands in one line share it
	case args[0] == "onion":
		checkOnion(t, line, args[1:])
	case args[0] == "go" && len(args) > 2 && args[1] == "run":
		pkgArg := args[2]
		if pkgArg == "-race" || strings.HasPrefix(pkgArg, "-") {
			return
		}
		if strings.HasSuffix(pkgArg, "./cmd/onion") && strings.HasPrefix(pkgArg, ".") && len(args) > 3 {
			checkOnion(t, line, args[3:])
		}
		if strings.Contains(pkgArg, "@") {
			return // from the proxy: not this checkout's business
		}
		checkPackage(t, line, runDir(dir, line), pkgArg, true)
	case args[0] == "go" && len(args) > 2 && (args[1] == "test" || args[1] == "install" || args[1] == "generate"):
		for _, a := range args[2:] {
			if !strings.HasPrefix(a, "-") && (strings.HasPrefix(a, "./") || strings.HasPrefix(a, "github.com/onionkit/")) && !strings.Contains(a, "@") {
				checkPackage(t, line, runDir(dir, line), a, args[1] == "install")
			}
		}
	}
}

// runDir is where line runs its go command: dir, or the directory its cd
// names.
func runDir(dir, line string) string {
	if m := regexp.MustCompile(`\bcd (\S+) &&`).FindStringSubmatch(line); m != nil {
		return filepath.Join(dir, m[1])
	}
	return dir
}

// checkPackage checks that pattern names packages from dir, a main
// package when main is set.
func checkPackage(t *testing.T, line, dir, pattern string, main bool) {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-f", "{{.Name}} {{if .Error}}{{.Error}}{{end}}", pattern)
	cmd.Dir = dir
	var stderr strings.Builder // "go: downloading …" on a cold module cache
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("%q: go list %s in %s: %v: %s%s", line, pattern, dir, err, out, stderr.String())
		return
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, errText, _ := strings.Cut(l, " ")
		if errText != "" || main && name != "main" {
			t.Errorf("%q: %s in %s: package %q %s", line, pattern, dir, name, errText)
		}
	}
}

// checkOnion parses an onion command line as the command does.
func checkOnion(t *testing.T, line string, args []string) {
	t.Helper()
	if len(args) == 0 {
		return
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		fs := flag.NewFlagSet("onion "+c.name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.flags(fs)
		if err := fs.Parse(args[1:]); err != nil {
			t.Errorf("%q: onion %s does not take these flags: %v", line, c.name, err)
		}
		return
	}
	t.Errorf("%q: onion has no command %q", line, args[0])
}
