package webfetch_test

import (
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin"
	_ "github.com/onionkit/onion/builtin/webfetch"
)

// TestToolsReference checks that importing this package lets builtin.Tools
// build "web_fetch".
func TestToolsReference(t *testing.T) {
	tools, err := builtin.Tools("web_fetch", "todo")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 5 || tools[0].Name() != "web_fetch" || tools[0].Intent() != onion.Read {
		t.Errorf("Tools(web_fetch, todo) = %v, want web_fetch (read) first", tools)
	}
}
