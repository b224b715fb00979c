package onion_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// providerPackages are the model providers, which stand beside package
// onion as database/sql drivers stand beside database/sql.
var providerPackages = []string{"openai", "anthropic", "gemini"}

// TestProvidersImportOnlyLoop lists what each provider package imports,
// directly or not, and fails on any package of the onion module but loop:
// no provider imports package onion, so that onion can import one for its
// default model and a program can use any of them with loop alone.
func TestProvidersImportOnlyLoop(t *testing.T) {
	const module = "github.com/onionkit/onion"
	for _, p := range providerPackages {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+p).Output() // stderr: "go: downloading …"
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v\n%s", p, err, stderrOf(err))
		}
		var ours []string
		for _, dep := range strings.Fields(string(out)) {
			if dep == module || strings.HasPrefix(dep, module+"/") {
				ours = append(ours, dep)
			}
		}
		if strings.Join(ours, " ") != module+"/loop "+module+"/"+p {
			t.Errorf("package %s imports %v of onion's packages; a provider may import loop alone", p, ours)
		}
	}
}

// stderrOf is what a command that failed wrote on stderr, as
// exec.Cmd.Output keeps it.
func stderrOf(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}
