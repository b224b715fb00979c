package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onionkit/onion"
)

var allRefs = []string{"web_search", "web_fetch", "todo", "memory", "files", "shell", "browser"}

// localRefs are the references whose tools live in this package; the
// others' packages test them (this test binary does not link them).
var localRefs = []string{"web_search", "todo", "memory", "files", "shell"}

// docTable reads the table of tools from doc.go and README.md: tool name →
// "reference intent" — the two must agree with each other and with the code.
func docTable(t *testing.T) map[string]string {
	t.Helper()
	goDoc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	fromDoc := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^//\t(\w+) +(\w+) +(read|write|delete) `).FindAllStringSubmatch(string(goDoc), -1) {
		fromDoc[m[2]] = m[1] + " " + m[3]
	}
	fromReadme := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(\\w+)` \\| `(\\w+)` \\| (read|write|delete) \\|").FindAllStringSubmatch(string(readme), -1) {
		fromReadme[m[2]] = m[1] + " " + m[3]
	}
	if fmt.Sprint(fromDoc) != fmt.Sprint(fromReadme) {
		t.Errorf("the tables in doc.go and README.md differ:\n%v\n%v", fromDoc, fromReadme)
	}
	return fromDoc
}

func TestToolsAll(t *testing.T) {
	t.Setenv("SEARXNG_URL", "")
	t.Setenv("BRAVE_API_KEY", "")
	t.Setenv("TAVILY_API_KEY", "")
	table := docTable(t)
	for name, row := range table {
		if ref, _, _ := strings.Cut(row, " "); !slices.Contains(localRefs, ref) {
			delete(table, name)
		}
	}
	seen := map[string]string{}
	for _, ref := range localRefs {
		tools, err := Tools(ref)
		if err != nil {
			t.Fatalf("Tools(%q): %v", ref, err)
		}
		for _, tool := range tools {
			if prev, ok := seen[tool.Name()]; ok {
				t.Errorf("tool %q comes from both %s and %s", tool.Name(), prev, ref)
			}
			seen[tool.Name()] = ref
			if want, got := table[tool.Name()], ref+" "+string(tool.Intent()); want != got {
				t.Errorf("tool %s: the code says %q, the doc table %q", tool.Name(), got, want)
			}
		}
		closeTools(t, tools)
	}
	if len(seen) != len(table) {
		t.Errorf("%d tools, but the doc table lists %d", len(seen), len(table))
	}
	for name := range table {
		if _, ok := seen[name]; !ok {
			t.Errorf("the doc table lists %s, which no reference makes", name)
		}
	}

	// All at once: no clash, and the order of the references is kept.
	tools, err := Tools(localRefs...)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools(t, tools)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name())
	}
	if len(names) != len(seen) || names[0] != "web_search" || names[1] != "add" {
		t.Errorf("Tools(all) = %v", names)
	}
	sorted := slices.Sorted(slices.Values(names))
	if len(slices.Compact(sorted)) != len(names) {
		t.Errorf("duplicate names in %v", names)
	}
}

// closeTools closes what the tools of one Tools call hold, the way an agent
// would: through an agent made of them.
func closeTools(t *testing.T, tools []*onion.Tool) {
	t.Helper()
	a, err := onion.NewAgent("test", tools)
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestToolsNarrow(t *testing.T) {
	tests := []struct {
		refs []string
		want string
	}{
		{[]string{"todo"}, "add list complete remove"},
		{[]string{"memory"}, "remember recall forget memories"},
		{[]string{"files"}, "read_file write_file list_files glob grep delete_file"},
		{[]string{"shell"}, "run_command"},
		{[]string{"shell", "todo", "shell", "todo"}, "run_command add list complete remove"},
		{nil, ""},
	}
	for _, tt := range tests {
		tools, err := Tools(tt.refs...)
		if err != nil {
			t.Fatalf("Tools(%v): %v", tt.refs, err)
		}
		var names []string
		for _, tool := range tools {
			names = append(names, tool.Name())
		}
		// The order of a struct's methods is the tools' order within one
		// reference; compare as sets there.
		if got, want := sortedWords(strings.Join(names, " ")), sortedWords(tt.want); got != want || len(names) != len(strings.Fields(tt.want)) {
			t.Errorf("Tools(%v) = %v, want %s", tt.refs, names, tt.want)
		}
		if len(tools) > 0 {
			closeTools(t, tools)
		}
	}
}

func sortedWords(s string) string {
	w := strings.Fields(s)
	slices.Sort(w)
	return strings.Join(slices.Compact(w), " ")
}

func TestToolsUnknown(t *testing.T) {
	tools, err := Tools("todo", "calculator")
	if err == nil || tools != nil {
		t.Fatalf("Tools with an unknown reference = %v, %v", tools, err)
	}
	for _, want := range append([]string{`"calculator"`}, allRefs...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestToolsSeparatePackages checks that the references whose tools live in
// packages of their own say which package to import when it is not linked
// in (this test binary links neither), and that builtin does not pull
// their dependencies into a program that imports only it.
func TestToolsSeparatePackages(t *testing.T) {
	for ref, pkg := range map[string]string{
		"browser":   "github.com/onionkit/onion/builtin/browser",
		"web_fetch": "github.com/onionkit/onion/builtin/webfetch",
	} {
		tools, err := Tools("todo", ref)
		if err == nil || tools != nil {
			t.Errorf("Tools(todo, %s) without its package = %v, %v; want an error", ref, tools, err)
			continue
		}
		if want := `import _ "` + pkg + `"`; !strings.Contains(err.Error(), want) {
			t.Errorf("Tools(%s) error = %q, want it to say %s", ref, err, want)
		}
	}
}

// TestBuiltinDependencies checks that a program using only builtin's own
// tools builds none of Chromium's protocol, readability or html-to-markdown.
func TestBuiltinDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/onionkit/onion/builtin").Output() // stderr: "go: downloading …"
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderrOf(err))
	}
	var nonStd int
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, ".") {
			nonStd++
		}
		for _, heavy := range []string{"github.com/chromedp/", "codeberg.org/readeck/go-readability", "github.com/JohannesKaufmann/html-to-markdown", "golang.org/x/net/html/charset"} {
			if strings.HasPrefix(dep, heavy) {
				t.Errorf("builtin depends on %s", dep)
			}
		}
	}
	t.Logf("builtin depends on %d non-standard packages", nonStd)
}

func TestToolsStateIsFresh(t *testing.T) {
	// Each call of Tools makes new instances: two agents never share a list.
	a, _ := Tools("todo")
	b, _ := Tools("todo")
	ctx := context.Background()
	if _, err := a[0].Call(ctx, `{"text":"only in a"}`); err != nil {
		t.Fatal(err)
	}
	for _, tool := range b {
		if tool.Name() == "list" {
			if got, _ := tool.Call(ctx, `{}`); got != "[]" {
				t.Errorf("second list sees %s", got)
			}
		}
	}
}

func TestToolsShellNeedsApproval(t *testing.T) {
	tools, err := Tools("shell")
	if err != nil {
		t.Fatal(err)
	}
	if !tools[0].NeedsApproval(context.Background(), onion.Call{Name: "run_command", Arguments: []byte(`{"command":"ls"}`)}) {
		t.Error("the default shell runs commands without approval")
	}
	for _, ref := range []string{"todo", "memory", "files"} {
		ts, _ := Tools(ref)
		for _, tool := range ts {
			if tool.NeedsApproval(context.Background(), onion.Call{Name: tool.Name(), Arguments: []byte(`{}`)}) {
				t.Errorf("%s asks for approval", tool.Name())
			}
		}
		closeTools(t, ts)
	}
}

func ExampleTools() {
	tools, err := Tools("todo", "memory")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, tool := range tools {
		fmt.Println(tool.Name(), tool.Intent())
	}
	// Unordered output:
	// add write
	// list read
	// complete write
	// remove delete
	// remember write
	// recall read
	// forget delete
	// memories read
}

func ExampleNewTodoList() {
	tools, _ := onion.ToolsFrom(NewTodoList())
	ctx := context.Background()
	for _, tool := range tools {
		switch tool.Name() {
		case "add":
			out, _ := tool.Call(ctx, `{"text":"buy milk"}`)
			fmt.Println(out)
		}
	}
	// Output: {"id":1,"text":"buy milk","done":false}
}

func ExampleNewShell() {
	shell := NewShell(ReadOnlyCommands("echo"))
	out, _ := shell.Call(context.Background(), `{"command":"echo hello"}`)
	fmt.Println(out)
	// Output:
	// hello
	// [exit code 0]
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
