package onion_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

// snippetRE finds the README's code blocks that are copies of code that is
// built and tested: <!-- snippet: path name --> before a fenced block.
var snippetRE = regexp.MustCompile("(?s)<!-- snippet: (\\S+) (\\S+) -->\n```(\\w*)\n(.*?)```")

// readmes are the READMEs whose marked blocks TestReadmeSnippets checks and
// whose Go and Starlark blocks TestReadmeCodeIsChecked requires to be
// marked, with the fewest marked blocks each is expected to hold.
var readmes = map[string]int{"README.md": 5, "examples/scripttools/README.md": 2}

// TestReadmeSnippets keeps every marked README block equal to the region of
// code it copies (between "snippet:name" and "end snippet:name" lines), so
// that the README shows only code that compiles and runs. -update rewrites
// the README from the code.
func TestReadmeSnippets(t *testing.T) {
	for path, least := range readmes {
		readme, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		var failed bool
		out := snippetRE.ReplaceAllFunc(readme, func(block []byte) []byte {
			m := snippetRE.FindSubmatch(block)
			found++
			want, err := region(string(m[1]), string(m[2]))
			if err != nil {
				t.Error(err)
				failed = true
				return block
			}
			if string(m[4]) != want {
				if !*update {
					t.Errorf("%s block %s %s differs from the code; run go test -run TestReadmeSnippets -update\nREADME:\n%s\ncode:\n%s", path, m[1], m[2], m[4], want)
				}
				failed = true
			}
			return []byte(fmt.Sprintf("<!-- snippet: %s %s -->\n```%s\n%s```", m[1], m[2], m[3], want))
		})
		if found < least {
			t.Errorf("found %d marked snippets in %s, want at least %d", found, path, least)
		}
		if *update && failed && !bytes.Equal(out, readme) {
			if err := os.WriteFile(path, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// fenceRE finds every fenced block of the README, with its marker if it has
// one.
var fenceRE = regexp.MustCompile("(?s)(<!-- snippet: \\S+ \\S+ -->\n)?```(\\w*)\n(.*?)```")

// TestReadmeCodeIsChecked keeps the README from showing Go or Starlark that
// no test compiles: every such block must be a marked snippet.
func TestReadmeCodeIsChecked(t *testing.T) {
	for path := range readmes {
		readme, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fenceRE.FindAllSubmatch(readme, -1) {
			if lang := string(m[2]); (lang == "go" || lang == "python") && len(m[1]) == 0 {
				t.Errorf("%s shows a %s block that is not a marked snippet of tested code; put the code in a test or example between snippet:name lines and mark the block <!-- snippet: file name -->:\n%s", path, lang, m[3])
			}
		}
	}
}

// docPackages are the directories of every package of the repository,
// the nested modules' too, whose doc comments TestDocSnippets checks.
func docPackages(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// docTables are the blocks of package docs that are tables, not code, by
// file and first line; each is held to the code by the test named.
var docTables = map[string][]string{
	"builtin/doc.go":       {"reference   tool         intent  limits"}, // builtin TestToolsAll
	"mcp/mcpclient/doc.go": {"readOnlyHint: true      onion.Read"},      // mcpclient TestIntent
	"mcp/mcpserver/doc.go": {
		"onion.Read              readOnlyHint: true",                             // mcpserver TestServe, TestWritesAreDestructiveUnlessAdditive
		`"io.github.onionkit/outcome"  "outcome_unknown" (a write or delete cut`, // mcpserver TestOutcomeMeta
	},
}

// TestDocSnippets keeps the code that package docs show compiling and
// true: every code block of a package comment must be, line for line, a
// region of built and tested code (between "snippet:name" and "end
// snippet:name" lines, in any .go or .star file of the module), unless it
// is a one-line command such as a //go:generate line.
func TestDocSnippets(t *testing.T) {
	regions := map[string]bool{}
	markerRE := regexp.MustCompile(`^\s*(?://|#)\s*snippet:(\S+)\s*$`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); d.IsDir() || ext != ".go" && ext != ".star" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if m := markerRE.FindStringSubmatch(l); m != nil {
				r, err := region(path, m[1])
				if err != nil {
					return err
				}
				regions[r] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	dirs := docPackages(t)
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc == nil {
				continue
			}
			for _, block := range docCodeBlocks(f.Doc.List) {
				checked++
				if lines := strings.Split(strings.TrimSpace(block), "\n"); len(lines) == 1 && (strings.HasPrefix(lines[0], "//go:") || strings.HasPrefix(lines[0], "go ")) {
					continue
				}
				if first, _, _ := strings.Cut(block, "\n"); slices.Contains(docTables[filepath.ToSlash(file)], first) || !isGo(block) {
					continue // a table, or shell commands (TestReadmeCommands in cmd/onion checks the command's)
				}
				if !regions[block] {
					t.Errorf("%s: the package doc shows code that is not a copy of a tested region; put it in a test or example between snippet:name and end snippet:name lines and copy it as it is:\n%s", file, block)
				}
			}
		}
	}
	if checked < 6 {
		t.Errorf("checked %d code blocks in the package docs of %v, want at least 6", checked, dirs)
	}
}

// isGo reports whether block is Go: declarations, or statements.
func isGo(block string) bool {
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "", "package p\n"+block, 0); err == nil {
		return true
	}
	_, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+block+"\n}", 0)
	return err == nil
}

// docCodeBlocks returns the code blocks (tab-indented paragraphs) of a doc
// comment given as its raw lines, without the indentation godoc strips.
func docCodeBlocks(comments []*ast.Comment) []string {
	var blocks []string
	var cur []string
	flush := func() {
		for len(cur) > 0 && cur[len(cur)-1] == "" {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
		}
		cur = nil
	}
	for _, c := range comments {
		line, ok := strings.CutPrefix(c.Text, "//")
		if !ok {
			flush()
			continue
		}
		switch {
		case strings.HasPrefix(line, "\t"):
			cur = append(cur, line[1:])
		case strings.TrimSpace(line) == "" && len(cur) > 0:
			cur = append(cur, "")
		default:
			flush()
		}
	}
	flush()
	return blocks
}

// region returns the lines between "snippet:name" and "end snippet:name"
// in file, without their common indentation.
func region(file, name string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var lines []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "/#")) {
		case "snippet:" + name:
			in = true
			continue
		case "end snippet:" + name:
			if !in {
				return "", fmt.Errorf("%s: end of snippet %s before its start", file, name)
			}
			return dedent(lines), nil
		}
		if in {
			lines = append(lines, l)
		}
	}
	return "", fmt.Errorf("%s: no snippet %s", file, name)
}

func dedent(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t "))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

// TestReadmeFirstPage keeps the README's first page, up to the second
// section, on one screen, and holds what a newcomer needs on it: a tool, a
// direct call, a run with a model, a conversation, and the system prompt
// line onion adds.
func TestReadmeFirstPage(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	first, _, ok := strings.Cut(string(readme), "\n## The onion command")
	if !ok {
		t.Fatal("no section The onion command")
	}
	if n := strings.Count(first, "\n"); n > 62 {
		t.Errorf("the first page is %d lines, more than a screen (62)", n)
	}
	for _, want := range []string{"## The first ten minutes", "tool.Call(", "agent.Input(", "agent.NewConversation()", "onion.ErrNoModel", loop.SafetyNote} {
		if !strings.Contains(first, want) {
			t.Errorf("the first page does not show %q", want)
		}
	}
}
