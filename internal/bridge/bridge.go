// Package bridge lets package drive reach into an onion.Agent without
// package onion exporting what only runtimes need: package onion sets
// these functions in its init, and drive calls them. Values are typed any
// where their types are onion's, which this package cannot import.
package bridge

import (
	"context"
	"log/slog"
	"time"

	"github.com/onionkit/onion/loop"
)

// RunSettings are an agent's settings for a whole run (see drive.RunConfig).
type RunSettings struct {
	Retries                               int
	BackoffMin, BackoffMax, MaxRetryAfter time.Duration
	Hooks                                 any // []onion.Hooks
	Logger                                *slog.Logger
}

// CallSettings are the settings of one tool call (see drive.CallConfig).
type CallSettings struct {
	Approver  any // func(context.Context, onion.Call) (bool, error), or nil
	Timeout   time.Duration
	MaxOutput int
}

// The functions package onion sets. agent is an *onion.Agent.
var (
	Loop       func(agent any) *loop.Loop
	CallConfig func(agent any) CallSettings // the agent's
	// One call of a tool outside a loop (see drive.CallConfig): its
	// approval, one attempt, and the two with the output capped.
	Approve    func(ctx context.Context, tool, call any, s CallSettings) (bool, string)
	Attempt    func(ctx context.Context, tool, call any, args string, s CallSettings) loop.Done
	RunCall    func(ctx context.Context, tool, call any, s CallSettings) any // onion.ToolCall
	RunInfo    func(agent any, runID, prompt string) any                     // onion.RunInfo
	Instrument func(agent any) any                                           // onion.Instrument, nil for none
	Run        func(agent any) RunSettings                                   //
	ResultOf   func(lr loop.Result) any                                      // *onion.Result
	CallOf     func(runID string, c loop.Call) any                           // onion.Call
	SubAgents  func(agent any) []any                                         // []*onion.Agent: the agents given as its tools
	SubAgent   func(tool any) any                                            // *onion.Agent a tool hands tasks to, nil for none
	// The task, the answer's spec (an *onion.AnswerSpec, nil for text)
	// and the output of a sub-run of an agent given as a tool.
	SubTask   func(tool any, args string, history []loop.Message) (string, error)
	SubAnswer func(agent any) any
	SubOutput func(agent any, output string) (string, error)
	// PromptImages takes the images onion.WithImages put in ctx.
	PromptImages func(ctx context.Context) (context.Context, []loop.Image)
)
