package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// This file is the second wire: a loop.LanguageModel speaking the
// Responses API (POST /v1/responses) through go-openai, plain or streamed.
// It is stateless unless asked otherwise: nothing is stored on the
// server, and the output items of each response, reasoning items with
// their encrypted content among them, travel back in the next request as
// they came.

// responsesModel sends requests to a Responses API endpoint.
type responsesModel struct {
	client *goopenai.Client
	chain  bool // send previous_response_id and only the new items
	// splice says the client sends the bodies responsesBody writes (see
	// request.go); otherwise go-openai's requests go as they are.
	splice bool
	tools  toolsCache
	// emptyLimit is the client's EmptyMessagesLimit, which bounds the
	// lines in a row of a stream that are not data.
	emptyLimit uint
	// plain holds the models (string → true) that refused to include
	// encrypted reasoning: OpenAI's models without reasoning, such as
	// gpt-4o-mini, answer 400 to it. They are asked without it from then on.
	plain sync.Map
}

func (m *responsesModel) Generate(ctx context.Context, req *loop.Request, onDelta func(loop.Delta)) (*loop.Response, error) {
	if err := checkImages(req.Messages); err != nil {
		return nil, fmt.Errorf("a request for the Responses API: %w", err)
	}
	_, plain := m.plain.Load(req.Model)
	include := !m.chain && !plain
	resp, err := m.send(ctx, req, include, onDelta)
	if err != nil && include && refusesInclude(err) {
		m.plain.Store(req.Model, true)
		resp, err = m.send(ctx, req, false, onDelta)
	}
	return resp, err
}

// send sends req once, asking for encrypted reasoning if include,
// streamed when onDelta is not nil.
func (m *responsesModel) send(ctx context.Context, req *loop.Request, include bool, onDelta func(loop.Delta)) (*loop.Response, error) {
	ctx, hint := withRetryAfter(ctx)
	var rreq goopenai.CreateResponseRequest
	if m.splice {
		body, err := m.responsesBody(req, include, onDelta != nil)
		if err != nil {
			return nil, err
		}
		hint.body = body
		rreq.Model = req.Model // the stub go-openai sends with body in its place
	} else {
		rreq = responsesRequest(req, m.chain)
		if !include {
			rreq.Include = nil
		}
	}
	var resp *loop.Response
	var err error
	if onDelta != nil {
		resp, err = m.stream(ctx, rreq, onDelta, hint)
	} else {
		resp, err = m.once(ctx, rreq)
	}
	if err != nil {
		return nil, modelError(err, hint, "the Responses API")
	}
	return resp, nil
}

// refusesInclude reports whether err is the endpoint refusing the include
// parameter: a 400 naming param "include" ("Encrypted content is not
// supported with this model").
func refusesInclude(err error) bool {
	var apiErr *goopenai.APIError
	return errors.As(err, &apiErr) && apiErr.HTTPStatusCode == http.StatusBadRequest &&
		apiErr.Param != nil && *apiErr.Param == "include"
}

// responsesRequest is req as go-openai sends it to /v1/responses, for a
// client that does not splice. The leading system messages are the
// instructions.
func responsesRequest(req *loop.Request, chain bool) goopenai.CreateResponseRequest {
	out := goopenai.CreateResponseRequest{Model: req.Model, Temperature: req.Temperature}
	msgs := req.Messages
	var instructions []string
	for len(msgs) > 0 && msgs[0].Role == loop.RoleSystem {
		instructions = append(instructions, msgs[0].Content)
		msgs = msgs[1:]
	}
	out.Instructions = strings.Join(instructions, "\n\n")
	store := chain
	out.Store = &store
	if chain {
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == loop.RoleAssistant && msgs[i].ResponseID != "" {
				out.PreviousResponseID = msgs[i].ResponseID
				msgs = msgs[i+1:]
				break
			}
		}
	} else {
		out.Include = []goopenai.ResponseInclude{goopenai.ResponseIncludeReasoningEncryptedContent}
	}
	input := make([]any, 0, len(msgs))
	for _, msg := range msgs {
		input = appendInput(input, msg)
	}
	out.Input = input
	if len(req.Tools) > 0 {
		out.Tools = make([]goopenai.ResponseTool, len(req.Tools))
		for i, d := range req.Tools {
			out.Tools[i] = goopenai.NewResponseFunctionTool(goopenai.FunctionDefinition{
				Name: d.Name, Description: d.Description, Parameters: d.Parameters, Strict: d.Strict,
			})
		}
		out.ToolChoice = "auto"
	}
	out.Text = responsesFormat(req.Format)
	return out
}

// functionCallItem is a function_call input item built from a loop.ToolRequest.
type functionCallItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// appendInput appends the input items of one message.
func appendInput(input []any, m loop.Message) []any {
	switch m.Role {
	case loop.RoleAssistant:
		if items, ok := outputItems(m); ok {
			for _, it := range items {
				input = append(input, it)
			}
			return input
		}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			input = append(input, goopenai.ResponseInputMessage{Role: string(m.Role), Content: m.Content})
		}
		for _, c := range m.ToolCalls {
			input = append(input, functionCallItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		return input
	case loop.RoleTool:
		var output any = m.Content
		if len(m.Images) > 0 {
			output = goInputParts(contentParts(&m))
		}
		return append(input, goopenai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: output})
	}
	var content any = m.Content
	if len(m.Images) > 0 {
		content = goInputParts(contentParts(&m))
	}
	return append(input, goopenai.ResponseInputMessage{Role: string(m.Role), Content: content})
}

// itemHead is what the wire reads of an output item: its type, and for a
// function call its call ID.
type itemHead struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
}

// outputItems returns the output items an assistant message carries from
// the Responses API, to send back as they came. The message's tool calls
// decide which function calls go: one the message no longer has is left
// out, with the message's reasoning items (a reasoning item may not go
// without the item that followed it), and one the items lack, a call the
// loop gave an ID, is added. It reports false when the message has no
// items of the Responses API.
func outputItems(m loop.Message) ([]json.RawMessage, bool) {
	var items []json.RawMessage
	if len(m.Items) == 0 || m.ItemsFrom != "" || json.Unmarshal(m.Items, &items) != nil || len(items) == 0 {
		return nil, false
	}
	calls := make(map[string]bool, len(m.ToolCalls)) // call ID → sent
	for _, c := range m.ToolCalls {
		calls[c.ID] = false
	}
	heads := make([]itemHead, len(items))
	dropped := false
	for i, it := range items {
		h := &heads[i]
		if json.Unmarshal(it, h) != nil || h.Type == "" {
			return nil, false
		}
		if h.Type == "function_call" {
			if sent, ok := calls[h.CallID]; !ok || sent {
				h.Type, dropped = "", true
				continue
			}
			calls[h.CallID] = true
		}
	}
	out := make([]json.RawMessage, 0, len(items)+len(m.ToolCalls))
	for i, it := range items {
		if heads[i].Type == "" || dropped && heads[i].Type == "reasoning" {
			continue
		}
		out = append(out, it)
	}
	for _, c := range m.ToolCalls {
		if !calls[c.ID] {
			calls[c.ID] = true
			out = append(out, appendFunctionCall(nil, c))
		}
	}
	return out, true
}

// outputItem is what the wire reads of an output item to build the reply.
type outputItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// responseMessage is the assistant message of a response's output items:
// the text of its messages (a refusal counts as text, and is reported),
// the reasoning text
// or summary the model showed, its function calls in order, and the items
// themselves, to be sent back.
func responseMessage(items []json.RawMessage) (loop.Message, bool, error) {
	msg := loop.Message{Role: loop.RoleAssistant}
	var text, reasoning strings.Builder
	refusal := false
	for i, raw := range items {
		var it outputItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return loop.Message{}, false, fmt.Errorf("output item %d: %w", i, err)
		}
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				text.WriteString(c.Text)
				text.WriteString(c.Refusal)
				refusal = refusal || c.Type == "refusal" && c.Refusal != ""
			}
		case "reasoning":
			for _, s := range it.Summary {
				joinText(&reasoning, s.Text)
			}
			for _, c := range it.Content {
				joinText(&reasoning, c.Text)
			}
		case "function_call":
			msg.ToolCalls = append(msg.ToolCalls, loop.ToolRequest{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		}
	}
	msg.Content, msg.Reasoning = text.String(), reasoning.String()
	if len(items) > 0 {
		msg.Items = joinItems(items)
	}
	return msg, refusal, nil
}

// joinItems is the JSON array of items, each as it is: json.Marshal
// would escape their <, > and & again.
func joinItems(items []json.RawMessage) json.RawMessage {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}

// joinText appends s to b, a blank line apart from what b holds.
func joinText(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(s)
}

// finishReason is why a response ended, in Chat Completions' words where
// they fit: tool_calls, stop, or the reason an incomplete response gives.
func finishReason(msg loop.Message, status string, incomplete string) string {
	switch {
	case status == string(goopenai.ResponseStatusIncomplete) && incomplete != "":
		return incomplete
	case len(msg.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func fromResponsesUsage(u *goopenai.ResponseUsage) loop.Usage {
	if u == nil {
		return loop.Usage{}
	}
	out := loop.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
	if u.InputTokensDetails != nil {
		out.CachedTokens = u.InputTokensDetails.CachedTokens
	}
	if u.OutputTokensDetails != nil {
		out.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens
	}
	return out
}

// failedError is the error of a response whose status is failed.
// clip cuts s, a server's text, to at most n bytes, for an error.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func failedError(e *streamError) error {
	if e == nil {
		return errors.New("the model endpoint reported that the response failed")
	}
	return fmt.Errorf("the model endpoint reported that the response failed: %w", &goopenai.APIError{Code: e.Code, Message: e.Message, Type: e.Type})
}

func (m *responsesModel) once(ctx context.Context, req goopenai.CreateResponseRequest) (*loop.Response, error) {
	resp, err := m.client.CreateResponse(ctx, req)
	if err != nil {
		return nil, err
	}
	if resp.Output == nil && resp.Object != "response" {
		// Not a response of the Responses API at all: a Chat Completions
		// reply (object "chat.completion"), or a server's own shape.
		return nil, fmt.Errorf("the model endpoint's reply is not a Responses API response (object %q, no output): does this server take the Responses API? Leave out ResponsesAPI to use Chat Completions", clip(resp.Object, 64))
	}
	if resp.Status == goopenai.ResponseStatusFailed {
		var e *streamError
		if resp.Error != nil {
			e = &streamError{Code: resp.Error.Code, Message: resp.Error.Message}
		}
		return nil, failedError(e)
	}
	// go-openai decodes the output as []any: encode each item again. The
	// values come back unchanged, the keys in another order, and nothing
	// HTML-escaped.
	items := make([]json.RawMessage, len(resp.Output))
	for i, it := range resp.Output {
		b, err := appendJSON(nil, it)
		if err != nil {
			return nil, fmt.Errorf("output item %d: %w", i, err)
		}
		items[i] = b
	}
	msg, refusal, err := responseMessage(items)
	if err != nil {
		return nil, err
	}
	msg.ResponseID = resp.ID
	var incomplete string
	if resp.IncompleteDetails != nil {
		incomplete = resp.IncompleteDetails.Reason
	}
	out := &loop.Response{ID: resp.ID, Model: resp.Model, Message: msg,
		FinishReason: finishReason(msg, string(resp.Status), incomplete), Usage: fromResponsesUsage(resp.Usage)}
	refused(out, refusal, "")
	return out, nil
}
