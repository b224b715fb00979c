package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// rootEnv, when set, makes the test binary run the example's main on that
// root instead of running tests, so that a test can talk to it over stdio.
const rootEnv = "ONION_EXAMPLE_MCPSERVER_ROOT"

func TestMain(m *testing.M) {
	if root := os.Getenv(rootEnv); root != "" {
		os.Args = []string{os.Args[0], "-root", root}
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestServesBuiltinTools(t *testing.T) {
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rootEnv+"="+root)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cs.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()

	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	annotations := make(map[string]*mcp.ToolAnnotations)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		annotations[tool.Name] = tool.Annotations
	}
	for _, want := range []string{"add", "list", "complete", "remove", "read_file", "write_file", "list_files", "glob", "grep", "delete_file"} {
		if !slices.Contains(names, want) {
			t.Errorf("no tool %q among %q", want, names)
		}
	}
	if a := annotations["list"]; a == nil || !a.ReadOnlyHint {
		t.Errorf("list annotations = %+v, want readOnlyHint", a)
	}

	call := func(name, args string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError || len(res.Content) != 1 {
			t.Fatalf("%s: %+v", name, res)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := call("add", `{"text":"water the plants"}`); got != `{"id":1,"text":"water the plants","done":false}` {
		t.Errorf("add = %s", got)
	}
	call("write_file", `{"path":"plan.txt","content":"water the plants"}`)
	b, err := os.ReadFile(filepath.Join(root, "plan.txt"))
	if err != nil || string(b) != "water the plants" {
		t.Errorf("plan.txt = %q, %v", b, err)
	}
}

// TestMalformedInputKeepsServing sends a line that is not JSON, then ends
// the input: the server answers a parse error, keeps serving, and exits 0
// when the input ends, with nothing on stderr.
func TestMalformedInputKeepsServing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rootEnv+"="+t.TempDir())
	cmd.Stdin = strings.NewReader("not json\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil || stderr.Len() > 0 {
		t.Errorf("exit %v, stderr %q; want exit 0 and no complaint", err, stderr.String())
	}
	if strings.Count(stderr.String(), "mcpserver:") > 1 {
		t.Errorf("stderr %q names mcpserver twice", stderr.String())
	}
	if !strings.Contains(stdout.String(), `"code":-32700`) {
		t.Errorf("stdout %q, want a JSON-RPC parse error", stdout.String())
	}
}

// TestStartupErrorSaysWhatOnce starts the server on a root that does not
// exist: the one line on stderr names each layer once.
func TestStartupErrorSaysWhatOnce(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rootEnv+"="+filepath.Join(t.TempDir(), "missing"))
	var stderr strings.Builder
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("the server started on a missing root")
	}
	msg := stderr.String()
	if !strings.Contains(msg, "missing") || strings.Contains(msg, "mcpserver: mcpserver:") || strings.Count(msg, "files:") != 1 {
		t.Errorf("stderr %q", msg)
	}
}

// TestReadmeHostConfig runs the host configuration the READMEs give, as a
// host would, from a directory outside the clone: it starts the server of
// this clone, and the server answers.
func TestReadmeHostConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example with go run")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	clone, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, readme := range []string{filepath.Join(clone, "README.md"), "README.md"} {
		b, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		block := hostConfig(t, string(b))
		var entry struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		var whole struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal([]byte(block), &whole) == nil && whole.MCPServers["onion"] != nil {
			block = string(whole.MCPServers["onion"])
		} else {
			block = strings.TrimPrefix(strings.TrimSpace(block), `"onion":`)
		}
		if err := json.Unmarshal([]byte(block), &entry); err != nil {
			t.Fatalf("%s: host config %q: %v", readme, block, err)
		}
		if entry.Command != "go" {
			t.Fatalf("%s: the first host config runs %q, want go", readme, entry.Command)
		}
		root := t.TempDir()
		var args []string
		for _, a := range entry.Args {
			a = strings.ReplaceAll(a, "/path/to/onion", clone)
			a = strings.ReplaceAll(a, "/path/to/a/folder", root)
			args = append(args, strings.ReplaceAll(a, "/path/to/folder", root))
		}
		cmd := exec.Command(goBin, args...)
		cmd.Dir = t.TempDir() // a host starts it anywhere
		// Everything it needs is in the clone and the module cache; a
		// config that needs the network (such as …@latest) fails here.
		cmd.Env = append(os.Environ(), "GOPROXY=off")
		cmd.Stderr = os.Stderr
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("%s: %s %q: %v", readme, entry.Command, args, err)
		}
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) == 0 {
			t.Errorf("%s: tools %v, %v", readme, res, err)
		}
		if err := cs.Close(); err != nil {
			t.Errorf("%s: close: %v", readme, err)
		}
	}
}

// hostConfig is the first JSON block of a README.
func hostConfig(t *testing.T, readme string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "```json\n")
	if !ok {
		t.Fatal("no JSON block")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("unterminated JSON block")
	}
	return block
}
