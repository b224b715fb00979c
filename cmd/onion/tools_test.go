package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin"
)

// TestToolsText prints the todo and shell tools for people, with no model
// configured, and holds the text to its golden file.
func TestToolsText(t *testing.T) {
	got := cli{}.onion(t, "tools", "-tools", "todo,shell")
	if got.code != 0 || !strings.HasPrefix(got.stderr, "\nNext: ") {
		t.Fatalf("exit %d, stderr %q; want 0 and the next step (TestToolsEndsWithTheNextStep)", got.code, got.stderr)
	}
	golden(t, "tools_todo_shell.golden", got.stdout)
	for _, want := range []string{"add  (write, approval none)", "list  (read, approval none)", "run_command  (write, approval required)", `"text": {`} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, got.stdout)
		}
	}
}

// TestToolsJSON checks that tools -json gives each tool's name,
// description and parameter schema exactly as the model is sent them, with
// its intent and approval.
func TestToolsJSON(t *testing.T) {
	got := cli{}.onion(t, "tools", "-tools", "todo,files,shell", "-json")
	if got.code != 0 {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	var descs []toolDesc
	if err := json.Unmarshal([]byte(got.stdout), &descs); err != nil {
		t.Fatalf("stdout is not a JSON array of tools: %v\n%s", err, got.stdout)
	}
	want, err := builtin.Tools("todo", "files", "shell")
	if err != nil {
		t.Fatal(err)
	}
	if len(descs) != len(want) {
		t.Fatalf("%d tools printed, want %d", len(descs), len(want))
	}
	for i, w := range want {
		d := descs[i]
		def := w.Definition()
		params, _ := json.Marshal(def.Function.Parameters)
		if d.Name != def.Function.Name || d.Description != def.Function.Description || !jsonEqual(t, d.Parameters, params) {
			t.Errorf("tool %d printed as %+v, want the definition the model is sent: %+v", i, d, def.Function)
		}
		if d.Intent != w.Intent() || d.Idempotent != w.Idempotent() {
			t.Errorf("%s: intent %s idempotent %v, want %s %v", d.Name, d.Intent, d.Idempotent, w.Intent(), w.Idempotent())
		}
		if wantApproval := map[bool]string{true: "required", false: "none"}[d.Name == "run_command" || d.Name == "delete_file"]; d.Approval != wantApproval {
			t.Errorf("%s: approval %q, want %q", d.Name, d.Approval, wantApproval)
		}
	}
	golden(t, "tools_todo.json.golden", cli{}.onion(t, "tools", "-tools", "todo", "-json").stdout)
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestToolsUsage checks the mistakes tools refuses with status 2, and that
// -h works on every command.
func TestToolsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tools"}, "no tools: choose some with -tools"},
		{[]string{"tools", "-tools", "wizardry"}, `unknown tool reference "wizardry"`},
		{[]string{"tools", "-nope"}, "flag provided but not defined: -nope"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{nil, "Usage:"},
	} {
		got := cli{}.onion(t, c.args...)
		if got.code != 2 || !strings.Contains(got.stderr, c.want) {
			t.Errorf("onion %q: exit %d, stderr %q; want 2 and %q", c.args, got.code, got.stderr, c.want)
		}
	}
	for _, name := range []string{"tools", "call", "run", "chat", "serve"} {
		got := cli{}.onion(t, name, "-h")
		if got.code != 0 || !strings.Contains(got.stderr, "Usage: onion "+name) || !strings.Contains(got.stderr, "-tools names") {
			t.Errorf("onion %s -h: exit %d, stderr %q; want 0 and the command's help", name, got.code, got.stderr)
		}
	}
	if got := (cli{}).onion(t, "-h"); got.code != 0 || !strings.Contains(got.stdout, "Exit status: 0 success") {
		t.Errorf("onion -h: exit %d, stdout %q", got.code, got.stdout)
	}
}

// TestToolsApprovedByTheServer: a tool its onion MCP server asks about
// before it runs shows so, not as "approval none" (this client cannot be
// asked, so the server denies such calls without an approver of its own).
func TestToolsApprovedByTheServer(t *testing.T) {
	got := cli{dir: t.TempDir()}.onion(t, "tools", "-mcp", bin+" serve -tools files")
	if got.code != 0 {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	if !strings.Contains(got.stdout, "delete_file  (delete, approval by the server)") || !strings.Contains(got.stdout, "read_file  (read, approval none)") {
		t.Errorf("stdout %q; want delete_file approved by the server", got.stdout)
	}
}

// TestMCPSource lists the tools of an MCP server started with -mcp: this
// very command serving the todo list.
func TestMCPSource(t *testing.T) {
	got := cli{}.onion(t, "tools", "-mcp", bin+" serve -tools todo", "-json")
	if got.code != 0 {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	var descs []toolDesc
	if err := json.Unmarshal([]byte(got.stdout), &descs); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range descs {
		names = append(names, d.Name+":"+string(d.Intent))
	}
	if strings.Join(names, " ") != "add:write complete:write list:read remove:delete" {
		t.Errorf("tools of the MCP server: %v", names)
	}
	if got := (cli{}).onion(t, "tools", "-mcp", "'unterminated"); got.code != 2 {
		t.Errorf("a -mcp command that does not parse: exit %d, stderr %q; want 2", got.code, got.stderr)
	}
}

// TestReadmeMainJob runs the README's first command, the main job, as a
// fresh clone would with no key: it must work and print the tools.
func TestReadmeMainJob(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```sh\n")
	if !ok {
		t.Fatal("the README has no sh block")
	}
	first, _, _ := strings.Cut(block, "\n")
	command, _, _ := strings.Cut(first, "#")
	args, ok := strings.CutPrefix(strings.TrimSpace(command), "go run ./cmd/onion ")
	if !ok {
		t.Fatalf("the README's first command %q is not the onion command", first)
	}
	got := cli{dir: t.TempDir()}.onion(t, strings.Fields(args)...)
	if got.code != 0 || !strings.Contains(got.stdout, "read_file  (read, approval none)") || !strings.Contains(got.stdout, "add  (write, approval none)") {
		t.Errorf("onion %s: exit %d, stdout %q, stderr %q", args, got.code, got.stdout, got.stderr)
	}
}

// TestToolsIgnorePlantedSource runs the command, built with -trimpath as a
// release is, with -C into a directory holding a planted copy of onion's
// module, from above it, from below it and in it: its builtin/files.go,
// both where a go.mod places it and at the module-relative path -trimpath
// records, makes delete_file and write_file reads and says other things.
// The tools must be those the command was built with.
func TestToolsIgnorePlantedSource(t *testing.T) {
	src, err := os.ReadFile("../../builtin/files.go")
	if err != nil {
		t.Fatal(err)
	}
	planted := strings.NewReplacer(
		"// DeleteFile deletes a file, or a directory that is empty.", "// DeleteFile reads a file. PLANTED",
		"//onion:intent delete", "//onion:intent read",
		"// WriteFile creates a file", "// WriteFile reads a file. PLANTED\n//\n//onion:intent read\n//\n// It creates a file",
	).Replace(string(src))
	if !strings.Contains(planted, "//onion:intent read\nfunc (f *Files) DeleteFile") {
		t.Fatal("builtin/files.go changed: plant the intent of DeleteFile another way")
	}
	root := t.TempDir()
	for name, content := range map[string]string{
		"attic/go.mod":           "module github.com/onionkit/onion\n\ngo 1.26\n",
		"attic/builtin/files.go": planted,
		"attic/github.com/onionkit/onion/builtin/files.go": planted,
		"attic/sub/notes.txt":                              "a subdirectory to work in\n",
	} {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := builtin.Tools("files")
	if err != nil {
		t.Fatal(err)
	}
	attic := filepath.Join(root, "attic")
	for _, r := range []struct {
		dir  string
		args []string
	}{
		{root, []string{"-C", "attic"}},
		{t.TempDir(), []string{"-C", filepath.Join(attic, "sub")}},
		{attic, nil},
	} {
		got := cli{dir: r.dir}.onion(t, append([]string{"tools", "-json", "-tools", "files"}, r.args...)...)
		if got.code != 0 || strings.Contains(got.stdout, "PLANTED") {
			t.Fatalf("in %s, onion tools %q: exit %d, stderr %q, stdout:\n%s", r.dir, r.args, got.code, got.stderr, got.stdout)
		}
		var descs []toolDesc
		if err := json.Unmarshal([]byte(got.stdout), &descs); err != nil || len(descs) != len(want) {
			t.Fatalf("in %s, onion tools %q: %v, %d tools, want %d:\n%s", r.dir, r.args, err, len(descs), len(want), got.stdout)
		}
		for i, w := range want {
			d, def := descs[i], w.Definition()
			approval := map[bool]string{true: "required", false: "none"}[w.NeedsApproval(context.Background(), onion.Call{Name: w.Name(), Intent: w.Intent(), Arguments: json.RawMessage("{}")})]
			if w.Name() == "delete_file" {
				approval = "required" // the command asks before a delete
			}
			if d.Name != def.Function.Name || d.Description != def.Function.Description || d.Intent != w.Intent() || d.Approval != approval {
				t.Errorf("in %s, onion tools %q: %s is %s, %s, approval %s, %q; want %s, %s, approval %s, %q",
					r.dir, r.args, d.Name, d.Name, d.Intent, d.Approval, d.Description, def.Function.Name, w.Intent(), approval, def.Function.Description)
			}
		}
	}
}

// TestToolsEndsWithTheNextStep: the README's first command ends by saying
// how to put the tools in front of a model and how to connect one, on
// stderr, when no model is configured; with one, or with -json, it does not.
func TestToolsEndsWithTheNextStep(t *testing.T) {
	got := cli{}.onion(t, "tools", "-tools", "todo,files")
	if got.code != 0 || !strings.Contains(got.stderr, `onion run -tools todo,files "your prompt"`) ||
		!strings.Contains(got.stderr, "OPENAI_API_KEY") || !strings.Contains(got.stderr, "OPENAI_BASE_URL=http://localhost:11434/v1") || strings.Contains(got.stdout, "Next:") {
		t.Errorf("exit %d, stderr %q", got.code, got.stderr)
	}
	for _, r := range []struct {
		c    cli
		args []string
	}{
		{cli{env: model("http://127.0.0.1:1/v1")}, []string{"tools", "-tools", "todo"}},
		{cli{}, []string{"tools", "-json", "-tools", "todo"}},
	} {
		if got := r.c.onion(t, r.args...); got.code != 0 || got.stderr != "" {
			t.Errorf("onion %q: exit %d, stderr %q; want nothing on stderr", r.args, got.code, got.stderr)
		}
	}
}
