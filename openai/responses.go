package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// the text of its messages (a refusal counts as text), the reasoning text
// or summary the model showed, its function calls in order, and the items
// themselves, to be sent back.
func responseMessage(items []json.RawMessage) (loop.Message, error) {
	msg := loop.Message{Role: loop.RoleAssistant}
	var text, reasoning strings.Builder
	for i, raw := range items {
		var it outputItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return loop.Message{}, fmt.Errorf("output item %d: %w", i, err)
		}
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				text.WriteString(c.Text)
				text.WriteString(c.Refusal)
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
	return msg, nil
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
	msg, err := responseMessage(items)
	if err != nil {
		return nil, err
	}
	msg.ResponseID = resp.ID
	var incomplete string
	if resp.IncompleteDetails != nil {
		incomplete = resp.IncompleteDetails.Reason
	}
	return &loop.Response{ID: resp.ID, Model: resp.Model, Message: msg,
		FinishReason: finishReason(msg, string(resp.Status), incomplete), Usage: fromResponsesUsage(resp.Usage)}, nil
}

// streamEvent is what the wire reads of one Responses stream event.
type streamEvent struct {
	Type        string          `json:"type"`
	OutputIndex *int            `json:"output_index"`
	ItemID      string          `json:"item_id"`
	Delta       string          `json:"delta"`
	Arguments   *string         `json:"arguments"`
	Item        json.RawMessage `json:"item"`
	Response    *streamResponse `json:"response"`
	// The error event carries its fields at the top level or, as
	// api.openai.com sent it in 2025, in an error object.
	Code    any          `json:"code"`
	Message string       `json:"message"`
	Error   *streamError `json:"error"`
}

type streamResponse struct {
	ID                string                              `json:"id"`
	Model             string                              `json:"model"`
	Status            string                              `json:"status"`
	Output            []json.RawMessage                   `json:"output"`
	Error             *streamError                        `json:"error"`
	IncompleteDetails *goopenai.ResponseIncompleteDetails `json:"incomplete_details"`
	Usage             *goopenai.ResponseUsage             `json:"usage"`
}

// streamError is an error inside a stream, whose code may be a string, a
// number or null.
type streamError struct {
	Type    string `json:"type"`
	Code    any    `json:"code"`
	Message string `json:"message"`
}

// streamItem is one output item being streamed.
type streamItem struct {
	pos  int             // position in responseAssembler.items
	raw  json.RawMessage // the latest whole item: from output_item.added, then .done
	done bool            // raw is from output_item.done
	args strings.Builder // argument deltas, for a call whose done event never came
}

// responseAssembler builds a response from its stream events, in time
// linear in their size.
type responseAssembler struct {
	items   []*streamItem  // in the order they began
	index   map[int]int    // output_index → position in items
	byID    map[string]int // item id → position, for events without an index
	text    strings.Builder
	final   *streamResponse // the response of response.completed or .incomplete
	id      string
	model   string
	onDelta func(loop.Delta)
}

// item returns the item an event is about, adding it when it is new. An
// event with neither a known index nor a known item id is about the last
// item.
func (a *responseAssembler) item(ev *streamEvent) *streamItem {
	if ev.OutputIndex != nil {
		if p, ok := a.index[*ev.OutputIndex]; ok {
			return a.items[p]
		}
	} else if p, ok := a.byID[ev.ItemID]; ok {
		return a.items[p]
	} else if len(a.items) > 0 {
		return a.items[len(a.items)-1]
	}
	if ev.OutputIndex != nil {
		if a.index == nil {
			a.index = map[int]int{}
		}
		a.index[*ev.OutputIndex] = len(a.items)
	}
	it := &streamItem{pos: len(a.items)}
	a.items = append(a.items, it)
	return it
}

// handledEvents are the event types add reads.
var handledEvents = map[string]bool{
	"response.created": true, "response.in_progress": true,
	"response.output_item.added": true, "response.output_item.done": true,
	"response.output_text.delta": true, "response.reasoning_text.delta": true, "response.reasoning_summary_text.delta": true,
	"response.function_call_arguments.delta": true, "response.function_call_arguments.done": true,
	"response.completed": true, "response.incomplete": true, "response.failed": true, "error": true,
}

// add takes one event. It returns the error the event reports, if any,
// and whether the response is complete.
func (a *responseAssembler) add(ev *streamEvent) (bool, error) {
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response != nil {
			a.id, a.model = ev.Response.ID, ev.Response.Model
		}
	case "response.output_item.added", "response.output_item.done":
		it := a.item(ev)
		if len(ev.Item) > 0 {
			it.raw, it.done = ev.Item, ev.Type == "response.output_item.done"
			var h struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(ev.Item, &h) == nil && h.ID != "" {
				if a.byID == nil {
					a.byID = map[string]int{}
				}
				a.byID[h.ID] = it.pos
			}
		}
	case "response.output_text.delta":
		a.text.WriteString(ev.Delta)
		if ev.Delta != "" {
			a.onDelta(loop.Delta{Text: ev.Delta})
		}
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		if ev.Delta != "" {
			a.onDelta(loop.Delta{Reasoning: ev.Delta})
		}
	case "response.function_call_arguments.delta":
		a.item(ev).args.WriteString(ev.Delta)
	case "response.function_call_arguments.done":
		if ev.Arguments != nil {
			it := a.item(ev)
			it.args.Reset()
			it.args.WriteString(*ev.Arguments)
		}
	case "response.completed", "response.incomplete":
		a.final = ev.Response
		return true, nil
	case "response.failed":
		var e *streamError
		if ev.Response != nil {
			e = ev.Response.Error
		}
		return false, failedError(e)
	case "error":
		e := &goopenai.APIError{Code: ev.Code, Message: ev.Message}
		if ev.Error != nil {
			e = &goopenai.APIError{Code: ev.Error.Code, Message: ev.Error.Message, Type: ev.Error.Type}
		}
		return false, fmt.Errorf("the model endpoint reported an error mid-stream: %w", e)
	}
	return false, nil
}

// allDone reports whether the stream began items and finished each.
func (a *responseAssembler) allDone() bool {
	for _, it := range a.items {
		if !it.done {
			return false
		}
	}
	return len(a.items) > 0
}

// response is the assembled response. The output of response.completed
// wins, as the last word on every item (encrypted reasoning differs
// between the events); without it, the items as the stream left them.
func (a *responseAssembler) response() (*loop.Response, error) {
	resp := &loop.Response{ID: a.id, Model: a.model}
	var items []json.RawMessage
	var status, incomplete string
	if f := a.final; f != nil {
		items, status = f.Output, f.Status
		resp.Usage = fromResponsesUsage(f.Usage)
		if f.ID != "" {
			resp.ID = f.ID
		}
		if f.Model != "" {
			resp.Model = f.Model
		}
		if f.IncompleteDetails != nil {
			incomplete = f.IncompleteDetails.Reason
		}
	}
	if len(items) == 0 {
		for _, it := range a.items {
			raw, err := it.whole()
			if err != nil {
				return nil, err
			}
			if raw != nil {
				items = append(items, raw)
			}
		}
	}
	msg, err := responseMessage(items)
	if err != nil {
		return nil, err
	}
	if msg.Content == "" {
		msg.Content = a.text.String() // a server whose items left the text out
	}
	msg.ResponseID = resp.ID
	resp.Message = msg
	resp.FinishReason = finishReason(msg, status, incomplete)
	return resp, nil
}

// whole is the item as the stream left it: as output_item.done gave it,
// else as output_item.added did with the streamed arguments of a call.
func (it *streamItem) whole() (json.RawMessage, error) {
	if it.done || it.raw == nil {
		return it.raw, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(it.raw, &fields); err != nil {
		return nil, fmt.Errorf("output item: %w", err)
	}
	if it.args.Len() > 0 {
		args, _ := json.Marshal(it.args.String())
		fields["arguments"] = args
	}
	return json.Marshal(fields)
}

func (m *responsesModel) stream(ctx context.Context, req goopenai.CreateResponseRequest, onDelta func(loop.Delta), hint *retryHint) (*loop.Response, error) {
	stream, err := m.client.CreateResponseStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	a := responseAssembler{onDelta: onDelta}
	for {
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			// The body ended without response.completed: the reply is
			// whole only if every item it began was done.
			if a.allDone() {
				return a.response()
			}
			return nil, fmt.Errorf("the model endpoint's stream ended before the response completed: %w", io.ErrUnexpectedEOF)
		}
		if err == nil && len(raw) == 0 {
			err = errors.New("the stream ended with an error event") // one go-openai could not decode
		}
		if err != nil {
			if se := hint.streamError(); se != nil {
				return nil, fmt.Errorf("the model endpoint reported an error mid-stream: %w", se)
			}
			return nil, err
		}
		var ev streamEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(raw, &head) == nil && !handledEvents[head.Type] {
				continue // an event of a kind the wire does not read, in a shape it does not know
			}
			return nil, fmt.Errorf("the model endpoint sent an event the wire cannot read: %w", err)
		}
		complete, err := a.add(&ev)
		if err != nil {
			return nil, err
		}
		if complete {
			return a.response()
		}
	}
}
