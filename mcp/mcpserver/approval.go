package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/visible"
)

// newestProtocol is the first protocol version on which a server may not
// send elicitation/create in the middle of a call: it answers the call with
// an input request instead, and the client calls again with the answer
// (SEP-2322).
const newestProtocol = "2026-07-28"

// approvalKey names the one input request a call can carry: the question
// whether it may run.
const approvalKey = "onion_approval"

// maxQuestions bounds the questions of the newest protocol waiting for an
// answer, which a client could otherwise pile up without ever answering.
const maxQuestions = 1024

// gate decides the calls that need approval: the program's own approver,
// or else the user, asked through the MCP client's elicitation. Only a yes
// lets a call run; anything else (no way to ask, a "no", an error, a
// timeout) denies it, as onion's loop does, since the decision reaches
// onion.RunCall as its CallConfig.Approver.
type gate struct {
	approver func(ctx context.Context, c onion.Call) (bool, error)
	timeout  time.Duration
	now      func() time.Time

	mu    sync.Mutex          // guards asked
	asked map[string]question // by the token sent as the result's requestState
}

// question is a call the newest protocol asked the client about: only an
// answer to it, in time, lets that very call run.
type question struct {
	tool     string
	args     [sha256.Size]byte
	deadline time.Time
}

func newGate(cfg config) *gate {
	return &gate{approver: cfg.approver, timeout: cfg.approvalTimeout, now: cfg.now, asked: make(map[string]question)}
}

// errAsking is the gate's no for now: on the newest protocol, the
// question goes back to the client as the result of the call, and the
// call runs when the client calls again with the answer.
var errAsking = errors.New("the MCP client is asked, and calls again with the answer")

// approverOf is the approver of the one tools/call req, which onion.RunCall
// consults for a call that needs approval: the program's approver when
// there is one, else the MCP client's user. On the newest protocol, a call
// that carries no answer yet is denied for now: the approver leaves the
// question to send in *question.
func (g *gate) approverOf(req *mcp.CallToolRequest, question **mcp.CallToolResult) func(context.Context, onion.Call) (bool, error) {
	return func(ctx context.Context, call onion.Call) (bool, error) {
		if g.approver != nil {
			ctx, cancel := context.WithTimeout(ctx, g.timeout)
			defer cancel()
			yes, err := g.approver(ctx, call)
			if err == nil && ctx.Err() != nil {
				err = fmt.Errorf("no answer within %v", g.timeout)
			}
			return yes, err
		}
		if !canElicit(req.ClientCapabilities()) {
			return false, errors.New("the MCP client cannot be asked: it has no elicitation capability")
		}
		q, err := approvalQuestion(call)
		if err != nil {
			return false, err
		}
		if !onNewestProtocol(req) {
			ctx, cancel := context.WithTimeout(ctx, g.timeout)
			defer cancel()
			res, err := req.Session.Elicit(ctx, q)
			if err != nil {
				return false, fmt.Errorf("ask the MCP client: %w", err)
			}
			return accepted(res), nil
		}
		if answer, ok := req.Params.InputResponses[approvalKey]; ok {
			if !g.answers(req.Params.RequestState, call) {
				return false, errors.New("the answer is not to a question asked about this call within the approval timeout")
			}
			res, isElicit := answer.(*mcp.ElicitResult)
			return isElicit && accepted(res), nil
		}
		token, ok := g.ask(call)
		if !ok {
			return false, fmt.Errorf("%d questions wait for an answer already", maxQuestions)
		}
		*question = &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{approvalKey: q},
			RequestState:  token,
		}
		return false, errAsking
	}
}

// canElicit reports whether a client with caps can be asked a question in
// a form.
func canElicit(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	// With neither mode named, form is meant (the SDK reads it so too).
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// onNewestProtocol reports whether req follows the newest protocol, which
// says so in the request itself, or else in the session's initialize.
func onNewestProtocol(req *mcp.CallToolRequest) bool {
	if v, ok := req.Params.GetMeta()[mcp.MetaKeyProtocolVersion].(string); ok && v != "" {
		return v >= newestProtocol
	}
	if p := req.Session.InitializeParams(); p != nil {
		return p.ProtocolVersion >= newestProtocol
	}
	return true
}

// approvalQuestion is what the user is asked about c: the whole of its
// arguments, escaped (see visible.Arguments), or, when they are too long
// to show, an error instead of a question.
func approvalQuestion(c onion.Call) (*mcp.ElicitParams, error) {
	args, err := visible.Arguments(c.Arguments)
	if err != nil {
		return nil, fmt.Errorf("%w, so the MCP client is not asked: give the server an approver of its own (mcpserver.Approver) to decide such calls", err)
	}
	return &mcp.ElicitParams{
		Mode:            "form",
		Message:         fmt.Sprintf("The agent wants to run %s (%s) with %s. Allow it?", visible.String(c.Name), visible.String(string(c.Intent)), args),
		RequestedSchema: approvalSchema,
	}, nil
}

// approvalSchema is the form of the question: one box, ticked unless the
// user unticks it.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean","title":"Allow this call","default":true}}}`)

// accepted reports whether the user accepted the question and did not
// untick its approve box.
func accepted(res *mcp.ElicitResult) bool {
	if res == nil || res.Action != "accept" {
		return false
	}
	v, ok := res.Content["approve"]
	if !ok {
		return true
	}
	yes, isBool := v.(bool)
	return isBool && yes
}

// ask records a question about c and returns the token that the answer
// must carry back. It reports false when too many questions wait already.
func (g *gate) ask(c onion.Call) (string, bool) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for token, q := range g.asked {
		if now.After(q.deadline) {
			delete(g.asked, token)
		}
	}
	if len(g.asked) >= maxQuestions {
		return "", false
	}
	token := rand.Text()
	g.asked[token] = question{tool: c.Name, args: digest(c.Arguments), deadline: now.Add(g.timeout)}
	return token, true
}

// answers reports whether token belongs to a question about the call c
// asked no longer ago than the timeout. A token answers once.
func (g *gate) answers(token string, c onion.Call) bool {
	now := g.now()
	g.mu.Lock()
	q, ok := g.asked[token]
	delete(g.asked, token)
	g.mu.Unlock()
	return ok && q.tool == c.Name && q.args == digest(c.Arguments) && !now.After(q.deadline)
}

// digest identifies arguments whatever their spacing.
func digest(args json.RawMessage) [sha256.Size]byte {
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return sha256.Sum256(args)
	}
	return sha256.Sum256(b.Bytes())
}
