package builtin

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFactsUpToDate fails when a doc comment changed without
// go generate, here or in the tool packages under builtin/: the
// compiled-in facts win over the source, so stale ones would reach the
// model.
func TestGeneratedFactsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator with go run")
	}
	for _, dir := range []string{".", "browser", "webfetch"} {
		out := filepath.Join(t.TempDir(), "facts.go")
		cmd := exec.Command("go", "run", "../cmd/oniondoc", "-dir", dir, "-o", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("oniondoc -dir %s: %v\n%s", dir, err, b)
		}
		want, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "oniondoc_gen.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/oniondoc_gen.go is stale: run go generate ./builtin/...", dir)
		}
	}
}
