package loop_test

import (
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

// TestToolErrorMarksFailedCalls: a tool message is marked ToolError when
// its call failed or was cut, and not when it succeeded, was denied or
// was skipped.
func TestToolErrorMarksFailedCalls(t *testing.T) {
	marks := func(r *run) map[string]bool {
		out := map[string]bool{}
		for _, m := range r.st.Messages {
			if m.Role == loop.RoleTool {
				out[m.ToolCallID] = m.ToolError
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		end  func(r *run) []string
	}{
		{"failed", func(r *run) []string { return r.fail("c0", loop.ToolFailed) }},
		{"bad arguments", func(r *run) []string { return r.fail("c0", loop.BadArguments) }},
		{"outcome unknown", func(r *run) []string { return r.fail("c0", loop.Cut) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := start(t, testLoop(t, nil))
			r.reply("write", "read", "delete")
			tc.end(r)
			r.ok("c1")
			if got := marks(r); len(got) != 3 || !got["c0"] || got["c1"] || got["c2"] {
				t.Errorf("marks %v: want c0 alone", got)
			}
		})
	}
	t.Run("denied", func(t *testing.T) {
		r, _ := start(t, testLoop(t, nil))
		r.reply("refund")
		r.step(loop.Input{Approval: &loop.Approval{CallID: "c0", Reason: "no"}})
		if got := marks(r); len(got) != 1 || got["c0"] {
			t.Errorf("marks %v: a denial is no failure", got)
		}
	})
}

// TestRefused: a reply the provider refused ends the run with
// StopRefused, naming the finish reason; its tool calls never run, and a
// response with the same calls and an ordinary finish runs them.
func TestRefused(t *testing.T) {
	for _, finish := range []string{"content_filter", "refusal", "SAFETY", "RECITATION", "PROHIBITED_CONTENT"} {
		r, _ := start(t, testLoop(t, nil))
		msg := loop.Message{Role: loop.RoleAssistant, Content: "partial", ToolCalls: []loop.ToolRequest{{ID: "c0", Name: "write", Arguments: "{}"}}}
		expect(t, finish, r.step(loop.Input{Reply: &loop.Response{Message: msg, FinishReason: finish}}), "finish refused")
		if res := r.st.Result; res.Output != "partial" || len(res.Calls) != 0 || !strings.Contains(res.Error, finish) {
			t.Errorf("%s: result %+v", finish, res)
		}
	}
	r, _ := start(t, testLoop(t, nil))
	msg := loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolRequest{{ID: "c0", Name: "write", Arguments: "{}"}}}
	expect(t, "tool_calls", r.step(loop.Input{Reply: &loop.Response{Message: msg, FinishReason: "tool_calls"}}), "tool_started c0", "run c0#1")
}
