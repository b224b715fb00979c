package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/mcp/internal/outcome"
)

// handler runs t for one tools/call through onion.RunCall, the one way
// onion runs a call: approval (decided by g), the tool under the timeout,
// panics and timeouts turned into outcomes. Every call that does not
// succeed is an isError result with the text onion's loop gives its model,
// never a protocol error: the peer's model must read it. A call that ended
// outcome_unknown or denied also says so in the result's _meta, for a peer
// that keeps onion's outcomes (see outcomeOf). The images a tool returned
// or showed follow its text as MCP image content (see imageContent).
func handler(t *onion.Tool, wrap bool, g *gate, timeout time.Duration) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var question *mcp.CallToolResult
		// No MaxOutput: the text is also the structuredContent, which a cut
		// would make invalid JSON.
		cfg := drive.CallConfig{Approver: g.approverOf(req, &question), Timeout: timeout}
		tc := drive.RunCall(ctx, t, call(t, req), cfg)
		if question != nil {
			return question, nil
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: wireText(tc)}}}
		if tc.Outcome != onion.Succeeded {
			res.IsError = true
			if o, reason, ok := outcomeOf(tc); ok {
				outcome.Set(res, o, reason)
			}
			return res, nil
		}
		text := withoutNote(tc)
		if len(tc.Images) > 0 {
			res.Content = imageContent(tc.Images)
			if text != "" {
				res.Content = append([]mcp.Content{&mcp.TextContent{Text: text}}, res.Content...)
			}
		}
		if s := structured(t, text, wrap); s != nil {
			res.StructuredContent = s
		}
		return res, nil
	}
}

// wireText is the text of tc's result on the wire. A failed call's text
// is the loop's without its "error: ": isError says that, and a client
// loop (onion's mcpclient among them) says it again in its own words, so
// a tool served and consumed back reads exactly like the local one.
//
// A denial that no person gave — the client has no elicitation, the
// arguments were too long to show, the approver failed — says why instead
// of the loop's "the user denied this call": nobody was asked.
func wireText(tc onion.ToolCall) string {
	switch {
	case tc.Outcome == onion.Failed:
		return strings.TrimPrefix(tc.Output, "error: ")
	case tc.Outcome == onion.Denied && strings.HasPrefix(tc.Error, "approver failed: "):
		return "the call needed approval and nobody could be asked (" + strings.TrimPrefix(tc.Error, "approver failed: ") +
			"), so the tool did not run. Do not call it again unless the user asks for it."
	}
	return tc.Output
}

// withoutNote is the text of tc, a call that succeeded, without the note
// onion's loop puts ahead of it for its images: the peer's loop words its
// own, so a tool served and consumed back reads as the local one does.
func withoutNote(tc onion.ToolCall) string {
	note := loop.ImageNote(tc.Images)
	if note == "" || !strings.HasPrefix(tc.Output, note) {
		return tc.Output
	}
	return strings.TrimPrefix(tc.Output[len(note):], "\n")
}

// imageContent is images as MCP content: an image with its bytes as image
// content (mimeType and base64 data), one at a URL as a resource link the
// peer may fetch.
func imageContent(images []onion.Image) []mcp.Content {
	out := make([]mcp.Content, len(images))
	for i, img := range images {
		if img.URL != "" {
			out[i] = &mcp.ResourceLink{URI: img.URL, Name: "image " + strconv.Itoa(i+1), MIMEType: img.MIMEType}
			continue
		}
		out[i] = &mcp.ImageContent{MIMEType: img.MIMEType, Data: img.Data}
	}
	return out
}

// outcomeOf is the outcome tc's isError result carries in its _meta, and
// why, when isError alone would mislead: a write cut off mid-call may
// have taken effect (outcome_unknown), and a denied call did not fail but
// was not allowed to run. A failed call carries nothing: isError says it.
// The reason of a cut call is the one onion's outcome_unknown text puts in
// parentheses, without the "the tool was cut off: " of tc.Error, so that
// an onion client that ends the call outcome_unknown in its own loop
// words it the same, once.
func outcomeOf(tc onion.ToolCall) (o onion.Outcome, reason string, ok bool) {
	switch tc.Outcome {
	case onion.OutcomeUnknown:
		return tc.Outcome, strings.TrimPrefix(tc.Error, "the tool was cut off: "), true
	case onion.Denied:
		return tc.Outcome, tc.Error, true
	}
	return "", "", false
}

// call is the onion.Call of a tools/call of t. The SDK does not hand a
// tool handler the JSON-RPC request id, so the call gets an id of its own.
// Arguments that are missing or null are {}, as a model sends for a tool
// without parameters.
func call(t *onion.Tool, req *mcp.CallToolRequest) onion.Call {
	c := onion.Call{ID: "mcp_" + rand.Text(), Name: t.Name(), Intent: t.Intent(), Arguments: json.RawMessage("{}"), Attempt: 1}
	if req.Params != nil {
		if args := bytes.TrimSpace(req.Params.Arguments); len(args) > 0 && !bytes.Equal(args, []byte("null")) {
			c.Arguments = req.Params.Arguments
		}
	}
	return c
}

// structured is the structuredContent of a call of t that succeeded with
// the text out, or nil for none. The text is JSON already, made by the
// encoder that Tool.Call uses, which bounds depth and survives a
// panicking MarshalJSON, so it is sent as it is: a struct's object as the
// object it is, any other value wrapped as {"result": …} when wrap, as the
// output schema says. A text result has none; a raw tool's result, whose
// type is unknown, has one when it is a JSON object.
func structured(t *onion.Tool, out string, wrap bool) json.RawMessage {
	if rt := t.ResultType(); rt != nil && rt.Kind() == reflect.String {
		return nil
	}
	if wrap {
		// A []byte result, or a string behind an any, is text, not JSON.
		if !json.Valid([]byte(out)) {
			return nil
		}
		return json.RawMessage(`{"result":` + out + `}`)
	}
	return object(out)
}

// object returns s if it is a JSON object, else nil.
func object(s string) json.RawMessage {
	b := bytes.TrimSpace([]byte(s))
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return nil
	}
	return json.RawMessage(b)
}
