package temporal_test

import (
	"os"
	"testing"

	"github.com/onionkit/onion/internal/docspan"
)

// TestInlineCode holds what the README names of package temporal in inline
// code, such as `temporal.ResultAs[Bill]`, to the code (package onion's
// names are checked in the root module).
func TestInlineCode(t *testing.T) {
	pkgs := map[string]string{"temporal": "github.com/onionkit/onion/temporal"}
	c, err := docspan.Load(".", pkgs)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	spans := docspan.Spans(doc, pkgs)
	if len(spans) < 10 {
		t.Errorf("found %d spans naming package temporal, want at least 10", len(spans))
	}
	for _, s := range spans {
		if err := c.Check(s.Text); err != nil {
			t.Errorf("README.md:%d: `%s`: %v", s.Line, s.Text, err)
		}
	}
}
