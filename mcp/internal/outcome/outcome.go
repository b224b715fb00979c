// Package outcome carries onion's outcome of a call across MCP, in the
// _meta of an isError tools/call result, where isError alone would
// mislead: a write cut off mid-call (outcome_unknown) and a call that was
// denied. mcpserver writes it and mcpclient reads it; any other peer sees
// an ordinary isError result.
//
// The keys follow the MCP rule for _meta names: a reverse-DNS prefix
// that onion controls (its module lives under github.com/onionkit), whose
// second label is not modelcontextprotocol or mcp, then a slash and a name.
package outcome

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
)

const (
	// Key names the outcome: "outcome_unknown" or "denied".
	Key = "io.github.onionkit/outcome"
	// ReasonKey names why the call ended so, in words that fit the
	// parentheses of onion's outcome_unknown text: "it panicked: kaboom",
	// "it timed out after 2s", "the approver said no".
	ReasonKey = "io.github.onionkit/reason"
	// IntentKey names an onion tool's intent in the _meta of its tools/list
	// entry: MCP's hints have no "write" (a tool that may change what
	// exists is destructive), so an onion client reads the write back from
	// here.
	IntentKey = "io.github.onionkit/intent"
	// ApprovalKey says, in the _meta of an onion tool's tools/list entry,
	// that the server asks its own user before the tool runs ("required"):
	// a client without elicitation then sees such a call denied there.
	ApprovalKey = "io.github.onionkit/approval"
)

// Set records o and reason in res's _meta, keeping any other keys.
func Set(res *mcp.CallToolResult, o onion.Outcome, reason string) {
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[Key] = string(o)
	if reason != "" {
		res.Meta[ReasonKey] = reason
	}
}

// Of returns the outcome and reason recorded in res's _meta, or "" for
// what is missing or not a string.
func Of(res *mcp.CallToolResult) (onion.Outcome, string) {
	o, _ := res.Meta[Key].(string)
	reason, _ := res.Meta[ReasonKey].(string)
	return onion.Outcome(o), reason
}
