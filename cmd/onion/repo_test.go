package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryNotInRepository checks that the command built beside its
// sources (go build in cmd/onion) is neither committed nor committable:
// git ignores it. The tests themselves build into a temporary directory.
func TestBinaryNotInRepository(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	if out, err := exec.Command(git, "rev-parse", "--is-inside-work-tree").Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
		t.Skip("not in a git work tree")
	}
	for _, path := range []string{"onion", "../oniondoc/oniondoc"} {
		if out, err := exec.Command(git, "ls-files", "--", path).Output(); err != nil || len(out) > 0 {
			t.Errorf("%s is in the repository (%v): git rm --cached it", path, err)
		}
		if err := exec.Command(git, "check-ignore", "-q", "--no-index", "--", path).Run(); err != nil {
			t.Errorf("git does not ignore %s (%v): list it in .gitignore", path, err)
		}
	}
	if strings.HasPrefix(bin, ".") || !strings.Contains(bin, "onion-cmd-test") {
		t.Errorf("the tests build the command at %s, want a temporary directory", bin)
	}
}
