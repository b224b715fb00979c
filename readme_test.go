package onion_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// snippetRE finds the README's code blocks that are copies of code that is
// built and tested: <!-- snippet: path name --> before a fenced block.
var snippetRE = regexp.MustCompile("(?s)<!-- snippet: (\\S+) (\\S+) -->\n```(\\w*)\n(.*?)```")

// TestReadmeSnippets keeps every marked README block equal to the region of
// code it copies (between "snippet:name" and "end snippet:name" lines), so
// that the README shows only code that compiles and runs. -update rewrites
// the README from the code.
func TestReadmeSnippets(t *testing.T) {
	readme, err := os.ReadFile("README.md")
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
				t.Errorf("README block %s %s differs from the code; run go test -run TestReadmeSnippets -update\nREADME:\n%s\ncode:\n%s", m[1], m[2], m[4], want)
			}
			failed = true
		}
		return []byte(fmt.Sprintf("<!-- snippet: %s %s -->\n```%s\n%s```", m[1], m[2], m[3], want))
	})
	if found < 5 {
		t.Errorf("found %d marked snippets in README.md, want at least 5", found)
	}
	if *update && failed && !bytes.Equal(out, readme) {
		if err := os.WriteFile("README.md", out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
