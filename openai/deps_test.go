package openai

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoOnionButLoop lists what the package imports, directly or
// not, and fails on any package of the onion module but loop: a provider
// stands beside package onion, never on it, so that onion can import it
// for its default model and a program can use it with loop alone.
func TestImportsNoOnionButLoop(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list the imports with: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const module = "github.com/onionkit/onion"
	allowed := map[string]bool{module + "/openai": true, module + "/loop": true}
	var seen int
	for _, p := range strings.Fields(string(out)) {
		if p != module && !strings.HasPrefix(p, module+"/") {
			continue
		}
		seen++
		if !allowed[p] {
			t.Errorf("package openai imports %s; a provider may import no package of onion but loop", p)
		}
	}
	if seen != len(allowed) {
		t.Errorf("go list found %d packages of onion among the imports, want %d (openai and loop): %s", seen, len(allowed), out)
	}
}
