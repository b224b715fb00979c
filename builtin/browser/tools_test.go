package browser_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin"
	_ "github.com/onionkit/onion/builtin/browser"
)

// TestToolsReference checks that importing this package lets builtin.Tools
// build "browser", with the intents builtin's README table gives them.
func TestToolsReference(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `browser` \\| `(\\w+)` \\| (read|write|delete) \\|").FindAllStringSubmatch(string(readme), -1) {
		table[m[1]] = m[2]
	}
	tools, err := builtin.Tools("todo", "browser")
	if err != nil {
		t.Fatal(err)
	}
	a, err := onion.NewAgent("test", tools) // closes the browser in Close
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	n := 0
	for _, tool := range tools[4:] { // after the todo list's four
		n++
		if want := table[tool.Name()]; string(tool.Intent()) != want {
			t.Errorf("tool %s: intent %q, README table %q", tool.Name(), tool.Intent(), want)
		}
	}
	if n != len(table) || n != 9 {
		t.Errorf("Tools(browser) made %d tools; the README table lists %d", n, len(table))
	}
}
