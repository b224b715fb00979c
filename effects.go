package onion

import (
	"context"
	"encoding/json"
	"fmt"
)

// Intent says what a tool does to the world, which decides how its calls are
// scheduled, retried and approved. It is also a ToolOption:
// onion.NewTool(fn, onion.Read) and onion.NewTool(fn, onion.Intent(onion.Read))
// both declare a read-only tool.
type Intent string

// The intents a tool can declare. A tool that declares nothing is a Write.
const (
	// Read only looks things up. Read calls of one model response run
	// concurrently and may be retried.
	Read Intent = "read"
	// Write creates or changes something. Write calls run one at a time, in
	// the order the model gave them, exactly once unless marked idempotent.
	Write Intent = "write"
	// Delete removes something. It is scheduled like a Write.
	Delete Intent = "delete"
)

func (i Intent) applyTool(c *toolConfig) { c.intent = i }

func parseIntent(s string) (Intent, error) {
	switch Intent(s) {
	case Read, Write, Delete:
		return Intent(s), nil
	}
	return "", fmt.Errorf("unknown intent %q: use read, write or delete", s)
}

// Call identifies one call of a tool by the model. Tools read it with
// CallInfo; approvers receive it.
type Call struct {
	// ID is the model's tool call ID.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Intent is the tool's intent.
	Intent Intent `json:"intent"`
	// Arguments are the raw JSON arguments the model sent.
	Arguments json.RawMessage `json:"arguments"`
	// RunID identifies the Run the call belongs to.
	RunID string `json:"run_id"`
	// Attempt counts the attempts of this call, starting at 1.
	Attempt int `json:"attempt"`
	// IdempotencyKey stays the same across every attempt of this call: pass
	// it to the downstream API so that a retried write cannot happen twice.
	IdempotencyKey string `json:"idempotency_key"`
	// Agents is the path of agents whose run makes the call, from the
	// outermost down ("lead", "reader"), when the call is inside an agent
	// given as a tool: what an approver shows, since the outermost run's
	// approver decides it. Empty for a run's own calls.
	Agents []string `json:"agents,omitempty"`
}

type callKey struct{}

// CallInfo returns the call being executed, for use inside a tool. It
// reports false when ctx does not belong to a tool call, as when a tool is
// called directly with Tool.Call.
func CallInfo(ctx context.Context) (Call, bool) {
	cs, ok := ctx.Value(callKey{}).(*callState)
	if !ok {
		return Call{}, false
	}
	return cs.call, true
}

// withCall is ctx in a call of c, whose tool may show images (ShowImages).
func withCall(ctx context.Context, c Call) (context.Context, *callState) {
	cs := &callState{call: c}
	return context.WithValue(ctx, callKey{}, cs), cs
}
