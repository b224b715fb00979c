package onion_test

import (
	"os"
	"testing"

	"github.com/onionkit/onion/internal/docspan"
)

// docPkgs are the packages of this module that documents name in inline
// code, by the name they use. temporal's names are checked in its module.
var docPkgs = map[string]string{
	"onion":      "github.com/onionkit/onion",
	"loop":       "github.com/onionkit/onion/loop",
	"oniontest":  "github.com/onionkit/onion/oniontest",
	"telemetry":  "github.com/onionkit/onion/telemetry",
	"script":     "github.com/onionkit/onion/script",
	"builtin":    "github.com/onionkit/onion/builtin",
	"webfetch":   "github.com/onionkit/onion/builtin/webfetch",
	"browser":    "github.com/onionkit/onion/builtin/browser",
	"mcpclient":  "github.com/onionkit/onion/mcp/mcpclient",
	"mcpserver":  "github.com/onionkit/onion/mcp/mcpserver",
	"automation": "github.com/onionkit/onion/automation",
	"srcdoc":     "github.com/onionkit/onion/srcdoc",
	"drive":      "github.com/onionkit/onion/drive",
}

// docFiles are the documents whose inline code TestInlineCode checks.
var docFiles = []string{"README.md", "builtin/README.md", "bench/README.md", "examples/mcpserver/README.md", "examples/scripttools/README.md"}

// TestInlineCode holds the Go that the READMEs name in inline code, such as
// `onion.CallInfo(ctx)`, to the code: every name exists, every field or
// method selected is the type's, no selector follows a call with several
// results, every key of a composite literal is a field.
func TestInlineCode(t *testing.T) {
	c, err := docspan.Load(".", docPkgs)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range docFiles {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range docspan.Spans(doc, docPkgs) {
			checked++
			if err := c.Check(s.Text); err != nil {
				t.Errorf("%s:%d: `%s`: %v", file, s.Line, s.Text, err)
			}
		}
	}
	if checked < 80 {
		t.Errorf("checked %d spans, want at least 80", checked)
	}
}

// TestInlineCodeCatches shows the check failing for what it is for.
func TestInlineCodeCatches(t *testing.T) {
	c, err := docspan.Load(".", map[string]string{"onion": "github.com/onionkit/onion"})
	if err != nil {
		t.Fatal(err)
	}
	for span, ok := range map[string]bool{
		"onion.CallInfo(ctx).IdempotencyKey":            false, // CallInfo returns (Call, bool)
		"onion.NoSuchThing":                             false,
		"onion.Hooks{BeforeModel, Nope}":                false,
		"onion.NewAgent(name, items...)":                true,
		"onion.Hooks{BeforeModel, AfterModel}":          true,
		"onion.NewTool(fn, onion.Name(..), onion.Read)": true,
		"onion.NewTool(fn, onion.Nmae(..))":             false,
		"onion.Ask[T]":                                  true,
		"onion.Call{}.IdempotencyKey":                   true,
	} {
		if err := c.Check(span); (err == nil) != ok {
			t.Errorf("Check(%q) = %v, want ok %v", span, err, ok)
		}
	}
}
