package oniontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// responsesPath is where the Responses API is served.
const responsesPath = "/v1/responses"

// ResponsesRequest is the body of a POST /v1/responses request, decoded.
// Whatever it does not name is in [Request.Raw].
type ResponsesRequest struct {
	Model        string
	Instructions string
	// Input is the conversation sent, item by item. A plain string input
	// is one user message item.
	Input []InputItem
	// Tools are the tool definitions as sent.
	Tools              []json.RawMessage
	ToolChoice         any
	Store              *bool // nil when the request did not say
	Include            []string
	PreviousResponseID string
	Stream             bool
	Temperature        *float32
	Reasoning          *openai.ResponseReasoning
}

// InputItem is one input item of a Responses request.
type InputItem struct {
	// Type is "message" (also for an item sent without a type),
	// "function_call", "function_call_output", "reasoning" or another type.
	Type string
	ID   string
	// Role is a message's role.
	Role string
	// Text is a message's text: its content when that is a string, else
	// the text of its content parts joined.
	Text string
	// CallID, Name and Arguments are a function call's; CallID and Output
	// a function call output's (Output as sent when it is a string, its
	// JSON otherwise).
	CallID, Name, Arguments, Output string
	// Raw is the item exactly as sent.
	Raw json.RawMessage
}

// itemWire is an input item as it may arrive.
type itemWire struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// decodeResponses fills r.Responses from r.Raw, and r.Body with the same
// conversation in Chat Completions terms.
func (r *Request) decodeResponses() error {
	var wire struct {
		Model              string                    `json:"model"`
		Instructions       string                    `json:"instructions"`
		Input              json.RawMessage           `json:"input"`
		Tools              []json.RawMessage         `json:"tools"`
		ToolChoice         any                       `json:"tool_choice"`
		Store              *bool                     `json:"store"`
		Include            []string                  `json:"include"`
		PreviousResponseID string                    `json:"previous_response_id"`
		Stream             bool                      `json:"stream"`
		Temperature        *float32                  `json:"temperature"`
		Reasoning          *openai.ResponseReasoning `json:"reasoning"`
	}
	if err := json.Unmarshal(r.Raw, &wire); err != nil {
		return err
	}
	rr := &ResponsesRequest{
		Model: wire.Model, Instructions: wire.Instructions, Tools: wire.Tools, ToolChoice: wire.ToolChoice,
		Store: wire.Store, Include: wire.Include, PreviousResponseID: wire.PreviousResponseID,
		Stream: wire.Stream, Temperature: wire.Temperature, Reasoning: wire.Reasoning,
	}
	var text string
	switch {
	case len(wire.Input) == 0 || string(wire.Input) == "null":
	case json.Unmarshal(wire.Input, &text) == nil:
		raw, _ := json.Marshal(map[string]string{"role": "user", "content": text})
		rr.Input = []InputItem{{Type: "message", Role: "user", Text: text, Raw: raw}}
	default:
		var raws []json.RawMessage
		if err := json.Unmarshal(wire.Input, &raws); err != nil {
			return fmt.Errorf("input: %w", err)
		}
		for i, raw := range raws {
			it, err := decodeItem(raw)
			if err != nil {
				return fmt.Errorf("input[%d]: %w", i, err)
			}
			rr.Input = append(rr.Input, it)
		}
	}
	r.Responses = rr
	r.Body = rr.chat()
	return rr.check()
}

// inputErrorBody is the body of a refusal: an OpenAI error naming a
// parameter.
type inputErrorBody struct {
	Error inputErrorFields `json:"error"`
}

type inputErrorFields struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// inputError is a conversation api.openai.com refuses, in its words.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// check refuses, as api.openai.com does, a conversation that does not hold
// together when nothing is kept on the server (no previous_response_id):
// an output whose call was not sent, a call sent without its output, a
// reasoning item with no item after it.
func (rr *ResponsesRequest) check() error {
	if rr.PreviousResponseID != "" {
		return nil // the server's stored conversation may hold the rest
	}
	calls := map[string]bool{} // call_id → its output was sent
	var order []string
	for i, it := range rr.Input {
		switch it.Type {
		case "function_call":
			if _, ok := calls[it.CallID]; !ok {
				order = append(order, it.CallID)
			}
			calls[it.CallID] = false
		case "function_call_output":
			if _, ok := calls[it.CallID]; !ok {
				return &inputError{fmt.Sprintf("No tool call found for function call output with call_id %s.", it.CallID)}
			}
			calls[it.CallID] = true
		case "reasoning":
			if i == len(rr.Input)-1 {
				return &inputError{fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", it.ID)}
			}
		}
	}
	for _, id := range order {
		if !calls[id] {
			return &inputError{fmt.Sprintf("No tool output found for function call %s.", id)}
		}
	}
	return nil
}

// refusal is the reply to a request that failed check: a 400 naming the
// input, as api.openai.com sends it.
func refusal(err error) (reply, bool) {
	if rep, ok := geminiRefusal(err); ok {
		return rep, true
	}
	var ie *inputError
	if !errors.As(err, &ie) {
		return reply{}, false
	}
	param := "input"
	body := marshal(inputErrorBody{Error: inputErrorFields{Message: ie.msg, Type: "invalid_request_error", Param: &param}})
	return reply{
		status: http.StatusBadRequest,
		header: http.Header{"Content-Type": {"application/json"}},
		pieces: [][]byte{append(body, '\n')},
	}, true
}

func decodeItem(raw json.RawMessage) (InputItem, error) {
	var w itemWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return InputItem{}, err
	}
	it := InputItem{Type: w.Type, ID: w.ID, Role: w.Role, CallID: w.CallID, Name: w.Name, Arguments: w.Arguments, Raw: raw}
	if it.Type == "" {
		it.Type = "message"
	}
	it.Text = contentText(w.Content)
	if len(w.Output) > 0 {
		var s string
		if json.Unmarshal(w.Output, &s) == nil {
			it.Output = s
		} else {
			it.Output = string(w.Output)
		}
	}
	return it, nil
}

// contentText is the text of a message's content: a string, or parts
// carrying text.
func contentText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(content, &parts) // content of another shape has no text
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// chat is the request's conversation as a Chat Completions request:
// instructions as a system message, messages as they are, function calls
// as tool calls of an assistant message (the one before them, when no tool
// result came in between), outputs as tool messages named after their
// call. Reasoning and other items have no Chat Completions form and are
// left out.
func (rr *ResponsesRequest) chat() openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: rr.Model, Stream: rr.Stream, ToolChoice: rr.ToolChoice}
	if rr.Temperature != nil {
		req.Temperature = *rr.Temperature
	}
	if rr.Instructions != "" {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: rr.Instructions})
	}
	names := map[string]string{} // call_id → function name
	for _, it := range rr.Input {
		last := len(req.Messages) - 1
		switch it.Type {
		case "message":
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: it.Role, Content: it.Text})
		case "function_call":
			names[it.CallID] = it.Name
			call := openai.ToolCall{ID: it.CallID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
			if last < 0 || req.Messages[last].Role != openai.ChatMessageRoleAssistant {
				req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant})
				last++
			}
			req.Messages[last].ToolCalls = append(req.Messages[last].ToolCalls, call)
		case "function_call_output":
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool,
				ToolCallID: it.CallID, Name: names[it.CallID], Content: it.Output})
		}
	}
	for _, raw := range rr.Tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      bool            `json:"strict"`
		}
		if json.Unmarshal(raw, &t) != nil || t.Type != "function" {
			continue
		}
		def := &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Strict: t.Strict}
		if len(t.Parameters) > 0 {
			def.Parameters = t.Parameters
		}
		req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: def})
	}
	return req
}
