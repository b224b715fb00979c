package onion

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/onionkit/onion/loop"
)

// FuzzSummarize: a summary of any conversation stays within its bound,
// is valid UTF-8 when the conversation is, keeps the newest message that
// fits, and holds no tool result.
func FuzzSummarize(f *testing.F) {
	f.Add("Plan a trip to Rome.", "Let me look.", "reader", "secret tool output", 200)
	f.Add(strings.Repeat("é", 500), "", "x", "", 10)
	f.Add("a\nb\tc", "d", "", "e", 1)
	f.Fuzz(func(t *testing.T, user, text, tool, result string, max int) {
		if max <= 0 || max > 1<<16 {
			return
		}
		msgs := []loop.Message{
			{Role: loop.RoleUser, Content: user},
			{Role: loop.RoleAssistant, Content: text, ToolCalls: []loop.ToolRequest{{ID: "c1", Name: tool}}},
			{Role: loop.RoleTool, ToolCallID: "c1", Content: "TOOLRESULT" + result},
		}
		s := summarize(msgs, max)
		if len(s) > max {
			t.Fatalf("%d bytes, more than %d", len(s), max)
		}
		if utf8.ValidString(user) && utf8.ValidString(text) && utf8.ValidString(tool) && !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8: %q", s)
		}
		if strings.Contains(s, "TOOLRESULT") {
			t.Fatalf("a tool result in the summary: %q", s)
		}
		if s != "" && !strings.HasPrefix(s[strings.LastIndexByte(s, '\n')+1:], "assistant: ") && !strings.HasPrefix(s, "user: ") {
			t.Fatalf("the newest line is neither message: %q", s)
		}
	})
}
