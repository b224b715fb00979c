package oniontest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// This file is the request side of Anthropic's Messages API, POST
// /v1/messages: the body decoded into AnthropicRequest, the same
// conversation in Chat Completions terms for Request.Body, and the
// refusals api.anthropic.com sends for a conversation it cannot take. The
// replies are in anthropic_wire.go. Nothing here imports Anthropic's SDK,
// so that a test of an OpenAI agent does not compile it.

// anthropicPath is where the Messages API is served.
const anthropicPath = "/v1/messages"

// AnthropicURL returns the server's base URL for an Anthropic client
// (ANTHROPIC_BASE_URL, anthropic.BaseURL): without "/v1", which the
// client adds.
func (s *Server) AnthropicURL() string {
	return s.srv.URL
}

// AnthropicRequest is the body of a POST /v1/messages request, decoded.
// Whatever it does not name is in [Request.Raw].
type AnthropicRequest struct {
	Model     string
	MaxTokens int
	Stream    bool
	// System is the system prompt's blocks; a string is one text block.
	System []AnthropicBlock
	// Messages are the conversation's messages, as sent.
	Messages []AnthropicMessage
	// Tools are the tool definitions as sent.
	Tools []json.RawMessage
	// ToolChoice, Thinking and OutputConfig are as sent, nil when absent.
	ToolChoice, Thinking, OutputConfig json.RawMessage
	Temperature                        *float32
}

// AnthropicMessage is one message of a Messages API request. A string
// content is one text block.
type AnthropicMessage struct {
	Role    string
	Content []AnthropicBlock
}

// AnthropicBlock is one content block of a request: text, image,
// tool_use, tool_result, thinking, redacted_thinking, or another type,
// whose fields are in Raw.
type AnthropicBlock struct {
	Type string
	// Text is a text block's text; for a tool_result, the text of its
	// content (the string, or its text blocks joined).
	Text string
	// Thinking and Signature are a thinking block's; Data is a
	// redacted_thinking block's.
	Thinking, Signature, Data string
	// ID, Name and Input are a tool_use block's (Input as sent).
	ID, Name string
	Input    json.RawMessage
	// ToolUseID and IsError are a tool_result block's, and Content its
	// content's blocks when it is a list.
	ToolUseID string
	IsError   bool
	Content   []AnthropicBlock
	// Source is an image block's: Type "base64" with MediaType and Data,
	// or "url" with URL.
	Source *AnthropicSource
	// CacheControl is the block's cache_control, nil without one.
	CacheControl json.RawMessage
	// Raw is the block exactly as sent.
	Raw json.RawMessage
}

// AnthropicSource is where an image block's image is.
type AnthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

// blockWire is a content block as it may arrive.
type blockWire struct {
	Type         string           `json:"type"`
	Text         string           `json:"text"`
	Thinking     string           `json:"thinking"`
	Signature    string           `json:"signature"`
	Data         string           `json:"data"`
	ID           string           `json:"id"`
	Name         string           `json:"name"`
	Input        json.RawMessage  `json:"input"`
	ToolUseID    string           `json:"tool_use_id"`
	IsError      bool             `json:"is_error"`
	Content      json.RawMessage  `json:"content"`
	Source       *AnthropicSource `json:"source"`
	CacheControl json.RawMessage  `json:"cache_control"`
}

// decodeAnthropic fills r.Anthropic from r.Raw, and r.Body with the same
// conversation in Chat Completions terms.
func (r *Request) decodeAnthropic() error {
	var wire struct {
		Model     string          `json:"model"`
		MaxTokens int             `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools        []json.RawMessage `json:"tools"`
		ToolChoice   json.RawMessage   `json:"tool_choice"`
		Thinking     json.RawMessage   `json:"thinking"`
		OutputConfig json.RawMessage   `json:"output_config"`
		Temperature  *float32          `json:"temperature"`
	}
	if err := json.Unmarshal(r.Raw, &wire); err != nil {
		return err
	}
	ar := &AnthropicRequest{
		Model: wire.Model, MaxTokens: wire.MaxTokens, Stream: wire.Stream, Tools: wire.Tools,
		ToolChoice: wire.ToolChoice, Thinking: wire.Thinking, OutputConfig: wire.OutputConfig, Temperature: wire.Temperature,
	}
	var err error
	if ar.System, err = decodeContent(wire.System, 0); err != nil {
		return fmt.Errorf("system: %w", err)
	}
	for i, m := range wire.Messages {
		blocks, err := decodeContent(m.Content, 0)
		if err != nil {
			return fmt.Errorf("messages.%d.content: %w", i, err)
		}
		ar.Messages = append(ar.Messages, AnthropicMessage{Role: m.Role, Content: blocks})
	}
	r.Anthropic = ar
	r.Body = ar.chat()
	return ar.check()
}

// decodeContent reads a content: a string (one text block), a list of
// blocks, or nothing.
func decodeContent(raw json.RawMessage, depth int) ([]AnthropicBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []AnthropicBlock{{Type: "text", Text: s, Raw: raw}}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return nil, err
	}
	out := make([]AnthropicBlock, 0, len(raws))
	for j, rb := range raws {
		var w blockWire
		if err := json.Unmarshal(rb, &w); err != nil {
			return nil, fmt.Errorf("%d: %w", j, err)
		}
		b := AnthropicBlock{Type: w.Type, Text: w.Text, Thinking: w.Thinking, Signature: w.Signature, Data: w.Data,
			ID: w.ID, Name: w.Name, Input: w.Input, ToolUseID: w.ToolUseID, IsError: w.IsError,
			Source: w.Source, CacheControl: w.CacheControl, Raw: rb}
		if w.Type == "tool_result" && depth == 0 {
			var content string
			if json.Unmarshal(w.Content, &content) == nil {
				b.Text = content
			} else {
				inner, err := decodeContent(w.Content, depth+1)
				if err != nil {
					return nil, fmt.Errorf("%d.content: %w", j, err)
				}
				b.Content, b.Text = inner, blocksText(inner)
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// blocksText is the text of blocks' text blocks, joined.
func blocksText(blocks []AnthropicBlock) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// chat is the request's conversation as a Chat Completions request: the
// system prompt as a system message, text as content, tool_use blocks as
// the tool calls of their assistant message (arguments as sent), each
// tool_result block a tool message named after its call, thinking as
// reasoning content. Images have no place there and are left out.
func (ar *AnthropicRequest) chat() openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: ar.Model, Stream: ar.Stream, MaxCompletionTokens: ar.MaxTokens}
	if ar.Temperature != nil {
		req.Temperature = *ar.Temperature
	}
	if s := blocksText(ar.System); s != "" {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: s})
	}
	names := map[string]string{} // tool_use id → name
	for _, m := range ar.Messages {
		msg := openai.ChatCompletionMessage{Role: m.Role}
		var text, thinking strings.Builder
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				text.WriteString(b.Text)
			case "thinking":
				thinking.WriteString(b.Thinking)
			case "tool_use":
				names[b.ID] = b.Name
				msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: b.ID, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: b.Name, Arguments: string(b.Input)}})
			case "tool_result":
				req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool,
					ToolCallID: b.ToolUseID, Name: names[b.ToolUseID], Content: b.Text})
			}
		}
		msg.Content, msg.ReasoningContent = text.String(), thinking.String()
		if msg.Content != "" || len(msg.ToolCalls) > 0 || msg.ReasoningContent != "" {
			req.Messages = append(req.Messages, msg)
		}
	}
	for _, raw := range ar.Tools {
		var t struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
			Strict      bool            `json:"strict"`
		}
		if json.Unmarshal(raw, &t) != nil || t.Name == "" {
			continue
		}
		def := &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Strict: t.Strict}
		if len(t.InputSchema) > 0 {
			def.Parameters = t.InputSchema
		}
		req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: def})
	}
	return req
}

// anthropicError is a request api.anthropic.com refuses, in its words.
type anthropicError struct{ msg string }

func (e *anthropicError) Error() string { return e.msg }

// check refuses, as api.anthropic.com does, a request without max_tokens
// or messages, an empty text block, more than four cache breakpoints, a
// tool_use ID the API does not take, and a conversation whose calls and
// results do not pair up: each tool_use answered by a tool_result in the
// next message, each tool_result answering a tool_use of the message
// before (consecutive messages of one role count as one, as the API joins
// them).
func (ar *AnthropicRequest) check() error {
	if ar.MaxTokens <= 0 {
		return &anthropicError{"max_tokens: Field required"}
	}
	if len(ar.Messages) == 0 {
		return &anthropicError{"messages: at least one message is required"}
	}
	marks := 0
	count := func(blocks []AnthropicBlock) error {
		for _, b := range blocks {
			if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
				marks++
			}
			if b.Type == "text" && b.Text == "" {
				return &anthropicError{"messages: text content blocks must be non-empty"}
			}
		}
		return nil
	}
	if err := count(ar.System); err != nil {
		return err
	}
	for _, raw := range ar.Tools {
		var t struct {
			CacheControl json.RawMessage `json:"cache_control"`
		}
		if json.Unmarshal(raw, &t) == nil && len(t.CacheControl) > 0 && string(t.CacheControl) != "null" {
			marks++
		}
	}
	// The turns, consecutive messages of one role joined.
	type turn struct {
		role   string
		first  int // the index of its first message
		blocks []AnthropicBlock
	}
	var turns []turn
	for i, m := range ar.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return &anthropicError{fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)}
		}
		if len(m.Content) == 0 && i != len(ar.Messages)-1 {
			return &anthropicError{fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)}
		}
		if err := count(m.Content); err != nil {
			return err
		}
		for j, b := range m.Content {
			if b.Type == "tool_use" && !validToolID(b.ID) {
				return &anthropicError{fmt.Sprintf("messages.%d.content.%d.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", i, j)}
			}
		}
		if n := len(turns); n > 0 && turns[n-1].role == m.Role {
			turns[n-1].blocks = append(turns[n-1].blocks, m.Content...)
			continue
		}
		turns = append(turns, turn{role: m.Role, first: i, blocks: append([]AnthropicBlock(nil), m.Content...)})
	}
	if marks > 4 {
		return &anthropicError{fmt.Sprintf("A maximum of 4 blocks with cache_control may be provided. Found %d.", marks)}
	}
	for k, t := range turns {
		uses := map[string]bool{}
		if k > 0 && turns[k-1].role == "assistant" {
			for _, b := range turns[k-1].blocks {
				if b.Type == "tool_use" {
					uses[b.ID] = true
				}
			}
		}
		answered := map[string]bool{}
		for j, b := range t.blocks {
			if b.Type != "tool_result" {
				continue
			}
			if !uses[b.ToolUseID] {
				return &anthropicError{fmt.Sprintf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", t.first, j, b.ToolUseID)}
			}
			answered[b.ToolUseID] = true
		}
		if t.role != "assistant" || k == len(turns)-1 {
			continue
		}
		var missing []string
		for _, b := range t.blocks {
			if b.Type == "tool_use" && !containsResult(turns[k+1].blocks, b.ID) {
				missing = append(missing, b.ID)
			}
		}
		if len(missing) > 0 {
			return &anthropicError{fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", t.first, strings.Join(missing, ", "))}
		}
	}
	return nil
}

func containsResult(blocks []AnthropicBlock, id string) bool {
	for _, b := range blocks {
		if b.Type == "tool_result" && b.ToolUseID == id {
			return true
		}
	}
	return false
}

func validToolID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// anthropicRefusal is the reply to a request that failed check: a 400 in
// the API's shape.
func anthropicRefusal(err error) (reply, bool) {
	var ae *anthropicError
	if !errors.As(err, &ae) {
		return reply{}, false
	}
	return anthropicErrorReply(http.StatusBadRequest, "invalid_request_error", ae.msg), true
}
