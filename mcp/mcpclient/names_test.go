package mcpclient

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
)

func TestUniqueName(t *testing.T) {
	long := strings.Repeat("x", 70)
	taken := make(map[string]bool)
	for _, c := range []struct{ in, want string }{
		{"greet", "greet"},
		{"greet (structured)", "greet__structured_"},
		{"greet", "greet_2"},
		{"greet", "greet_3"},
		{"files.read", "files_read"},
		{"files/read", "files_read_2"},
		{"", "tool"},
		{"héllo", "h__llo"}, // é is two bytes
		{long, long[:64]},
		{long, long[:62] + "_2"},
	} {
		if got := uniqueName(c.in, taken); got != c.want {
			t.Errorf("uniqueName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestIntent(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name string
		a    *mcp.ToolAnnotations
		want onion.Intent
	}{
		{"no annotations", nil, onion.Write},
		{"empty annotations", &mcp.ToolAnnotations{}, onion.Write},
		{"read-only", &mcp.ToolAnnotations{ReadOnlyHint: true}, onion.Read},
		{"read-only wins over destructive", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}, onion.Read},
		{"destructive", &mcp.ToolAnnotations{DestructiveHint: &yes}, onion.Delete},
		{"additive", &mcp.ToolAnnotations{DestructiveHint: &no}, onion.Write},
		{"an onion write", &mcp.ToolAnnotations{DestructiveHint: &yes}, onion.Write},
		{"a _meta read cannot narrow a destructive tool", &mcp.ToolAnnotations{DestructiveHint: &yes}, onion.Delete},
		{"a _meta read cannot make a write a read", &mcp.ToolAnnotations{}, onion.Write},
	} {
		tool := &mcp.Tool{Annotations: c.a}
		switch c.name {
		case "an onion write":
			tool.Meta = mcp.Meta{"io.github.onionkit/intent": "write"}
		case "a _meta read cannot narrow a destructive tool", "a _meta read cannot make a write a read":
			tool.Meta = mcp.Meta{"io.github.onionkit/intent": "read"}
		}
		if got := intent(tool); got != c.want {
			t.Errorf("%s: intent = %s, want %s", c.name, got, c.want)
		}
	}
}

func TestResultText(t *testing.T) {
	for _, c := range []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"empty", &mcp.CallToolResult{}, ""},
		{"texts", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, "a\n\nb"},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: []byte("abc")}}}, "[image: image/png, 3 bytes, not shown]"},
		{"embedded text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Text: "body"}}}}, "body"},
		{"structured only", &mcp.CallToolResult{StructuredContent: map[string]any{"y": 7}}, `{"y":7}`},
		{"text wins over structured", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "seven"}}, StructuredContent: map[string]any{"y": 7}}, "seven"},
	} {
		if got := resultText(c.res); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
