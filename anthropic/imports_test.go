package anthropic_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports: the package imports no package of onion but loop, and
// oniontest does not import Anthropic's SDK, so that a test of an OpenAI
// agent does not compile it.
func TestImports(t *testing.T) {
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkg.Imports {
		if strings.HasPrefix(p, "github.com/onionkit/onion") && p != "github.com/onionkit/onion/loop" {
			t.Errorf("package anthropic imports %s", p)
		}
	}
	ot, err := build.Default.ImportDir("../oniontest", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ot.Imports {
		if strings.Contains(p, "anthropic") {
			t.Errorf("package oniontest imports %s", p)
		}
	}
}
