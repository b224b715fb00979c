package mcpclient_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/oniontest"
)

// buildSDKExample builds one of the go-sdk's example servers from the
// module cache (the SDK is a dependency of this module), so that mcpclient
// meets a server nobody here wrote.
func buildSDKExample(t *testing.T, name string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("cannot build the go-sdk example %q: no go command: %v", name, err)
	}
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command(goBin, "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/examples/server/"+name).CombinedOutput()
	if err != nil {
		t.Skipf("cannot build the go-sdk example %q: %v\n%s", name, err, out)
	}
	return bin
}

// TestInteropHello drives the SDK's hello server through an agent.
func TestInteropHello(t *testing.T) {
	bin := buildSDKExample(t, "hello")
	ctx := context.Background()
	tools, err := mcpclient.Command(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name() != "greet" || tools[0].Description() != "say hi" || tools[0].Intent() != onion.Write {
		t.Fatalf("tools = %v", tools)
	}
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("greet", `{"name":"onion"}`)),
		oniontest.Text("It said hi."),
	)
	agent, err := onion.NewAgent("interop", tools, onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := agent.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	answer, err := agent.Input(ctx, "greet onion")
	if err != nil {
		t.Fatal(err)
	}
	if answer != "It said hi." {
		t.Errorf("answer = %q", answer)
	}
	if msg := lastToolMessage(t, s); msg.Content != "Hi onion" {
		t.Errorf("tool message = %q, want %q", msg.Content, "Hi onion")
	}
}

// TestInteropEverything lists the SDK's everything server, whose tool names
// onion cannot take as they are, and calls a few of its tools.
func TestInteropEverything(t *testing.T) {
	bin := buildSDKExample(t, "everything")
	ctx := context.Background()
	// Not Command: this server logs every message to stderr.
	tools, err := mcpclient.Tools(ctx, &mcp.CommandTransport{Command: exec.Command(bin)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := closeTools(tools); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	byName := toolMap(tools)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name())
	}
	for _, want := range []string{"greet", "greet__structured_", "greet__content_with_ResourceLink_", "ping"} {
		if !slices.Contains(names, want) {
			t.Errorf("no tool %q among %q", want, names)
		}
	}
	for _, c := range []struct{ name, args, want string }{
		{"greet", `{"name":"onion"}`, "Hi onion"},
		{"greet__structured_", `{"name":"onion"}`, `{"message":"Hi onion"}`},
		{"greet__content_with_ResourceLink_", `{"name":"onion"}`, "[resource greeting: data:text/plain,Hi%20onion]"},
		{"ping", `{}`, ""}, // the server pings the client mid-call
	} {
		tool, ok := byName[c.name]
		if !ok {
			continue
		}
		out, err := tool.Call(ctx, c.args)
		if err != nil || out != c.want {
			t.Errorf("%s(%s) = %q, %v; want %q", c.name, c.args, out, err, c.want)
		}
	}
}
