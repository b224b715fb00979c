package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
)

// An Option configures a server. Options go among the items given to New,
// ServeStdio and Handler, next to the tools.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is what the options set.
type config struct {
	approver        func(ctx context.Context, c onion.Call) (bool, error)
	approvalTimeout time.Duration
	toolTimeout     time.Duration
	http            *mcp.StreamableHTTPOptions
	now             func() time.Time // the gate's clock; tests set it
}

// DefaultApprovalTimeout is how long a question about a call that needs
// approval waits for its answer before the call is denied.
const DefaultApprovalTimeout = 2 * time.Minute

func defaultConfig() config {
	return config{approvalTimeout: DefaultApprovalTimeout, toolTimeout: onion.DefaultToolTimeout, now: time.Now}
}

// Approver decides the calls that need approval (a tool's RequireApproval
// or ApproveIf, or its //onion:approve directive) with fn, the same kind of
// func onion.Approver takes, instead of asking the MCP client. A "no", an
// error, a panic or the approval timeout passing deny the call, which does
// not run.
func Approver(fn func(ctx context.Context, c onion.Call) (bool, error)) Option {
	return optionFunc(func(c *config) { c.approver = fn })
}

// ApprovalTimeout sets how long a question about a call waits for its
// answer (DefaultApprovalTimeout unless set). A question still unanswered
// then is a denial.
func ApprovalTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.approvalTimeout = d
		}
	})
}

// ToolTimeout bounds each call of a tool, as onion.ToolTimeout bounds it
// in the agent loop, with the same outcome: a read cut by it is an error,
// and a write or delete ends as outcome unknown, since nobody knows whether
// it took effect. Approval is not counted: ApprovalTimeout bounds it.
// Unless set, the bound is onion.DefaultToolTimeout (5 minutes), as in
// an agent, so that no call a client makes holds the server forever; a d
// of 0 (or less) sets none.
func ToolTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.toolTimeout = max(d, 0) })
}

// HTTPOptions configures Handler's streamable HTTP transport with the
// SDK's own options. Unless they set Stateless, Handler keeps a session per
// client for the protocol versions that have sessions and serves requests
// of the newest protocol (2026-07-28), which has none, statelessly; with
// Stateless set it serves every request statelessly. New and ServeStdio
// ignore this option.
func HTTPOptions(o *mcp.StreamableHTTPOptions) Option {
	return optionFunc(func(c *config) {
		if o != nil {
			copied := *o
			c.http = &copied
		}
	})
}
