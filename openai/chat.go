package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// This file is the first wire: a loop.LanguageModel speaking Chat
// Completions through go-openai, plain or streamed, with the assembly of
// streamed tool-call fragments and the Retry-After and mid-stream errors
// that go-openai does not surface.

// chatModel sends requests to a Chat Completions endpoint.
type chatModel struct {
	client *goopenai.Client
	// splice says the client sends the bodies chatBody writes (see
	// request.go); otherwise go-openai's requests go as they are.
	splice bool
	tools  toolsCache
}

func newChatModel(client *goopenai.Client) *chatModel {
	return &chatModel{client: client, splice: splices(client), tools: toolsCache{encode: chatTools}}
}

func (m *chatModel) Generate(ctx context.Context, req *loop.Request, onDelta func(loop.Delta)) (*loop.Response, error) {
	if err := checkImages(req.Messages); err != nil {
		return nil, fmt.Errorf("a request for Chat Completions: %w", err)
	}
	ctx, hint := withRetryAfter(ctx)
	var creq goopenai.ChatCompletionRequest
	if m.splice {
		body, err := m.chatBody(req, onDelta != nil)
		if err != nil {
			return nil, err
		}
		hint.body = body
		// The stub go-openai checks the model and temperature of, and
		// sends with body in its place.
		creq.Model = req.Model
		if req.Temperature != nil {
			creq.Temperature = *req.Temperature
		}
	} else {
		creq = chatRequest(req)
	}
	var resp *loop.Response
	var err error
	if onDelta != nil {
		resp, err = m.stream(ctx, creq, onDelta, hint)
	} else {
		resp, err = m.once(ctx, creq)
	}
	if err != nil {
		return nil, modelError(err, hint, "Chat Completions")
	}
	return resp, nil
}

// chatRequest is req as go-openai sends it, for a client that does not
// splice.
func chatRequest(req *loop.Request) goopenai.ChatCompletionRequest {
	out := goopenai.ChatCompletionRequest{Model: req.Model, Messages: make([]goopenai.ChatCompletionMessage, 0, len(req.Messages))}
	chatMessages(req.Messages, func(m *loop.Message, parts []part) {
		out.Messages = append(out.Messages, chatMessage(m, parts))
	})
	if req.Temperature != nil {
		out.Temperature = *req.Temperature
	}
	if len(req.Tools) > 0 {
		out.Tools = make([]goopenai.Tool, len(req.Tools))
		for i, d := range req.Tools {
			out.Tools[i] = goopenai.Tool{Type: goopenai.ToolTypeFunction, Function: &goopenai.FunctionDefinition{
				Name: d.Name, Description: d.Description, Parameters: d.Parameters, Strict: d.Strict,
			}}
		}
		out.ToolChoice = "auto"
	}
	out.ResponseFormat = chatFormat(req.Format)
	return out
}

func chatMessage(m *loop.Message, parts []part) goopenai.ChatCompletionMessage {
	out := goopenai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content, ReasoningContent: m.Reasoning, ToolCallID: m.ToolCallID, Name: m.Name}
	if parts != nil {
		out.Content, out.MultiContent = "", goChatParts(parts)
	}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]goopenai.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			out.ToolCalls[i] = goopenai.ToolCall{ID: c.ID, Type: goopenai.ToolTypeFunction, Function: goopenai.FunctionCall{Name: c.Name, Arguments: c.Arguments}}
		}
	}
	return out
}

func fromChatMessage(m goopenai.ChatCompletionMessage) loop.Message {
	out := loop.Message{Role: loop.RoleAssistant, Content: m.Content, Reasoning: m.ReasoningContent}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, loop.ToolRequest{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	if len(out.ToolCalls) == 0 && m.FunctionCall != nil {
		// The legacy functions API: one tool call.
		out.ToolCalls = []loop.ToolRequest{{Name: m.FunctionCall.Name, Arguments: m.FunctionCall.Arguments}}
	}
	return out
}

func fromChatUsage(u goopenai.Usage) loop.Usage {
	out := loop.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

func (m *chatModel) once(ctx context.Context, req goopenai.ChatCompletionRequest) (*loop.Response, error) {
	resp, err := m.client.CreateChatCompletion(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("the model endpoint returned no choices")
	}
	ch := resp.Choices[0]
	return &loop.Response{ID: resp.ID, Model: resp.Model, Message: fromChatMessage(ch.Message),
		FinishReason: string(ch.FinishReason), Usage: fromChatUsage(resp.Usage)}, nil
}

// streamChunk is a stream chunk plus the error some servers put inside a
// 200 stream.
type streamChunk struct {
	goopenai.ChatCompletionStreamResponse
	Error *goopenai.APIError `json:"error,omitempty"`
}

func (m *chatModel) stream(ctx context.Context, req goopenai.ChatCompletionRequest, onDelta func(loop.Delta), hint *retryHint) (*loop.Response, error) {
	req.Stream = true
	req.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	stream, err := m.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	resp := &loop.Response{Message: loop.Message{Role: loop.RoleAssistant}}
	var content, reasoning strings.Builder
	var asm toolCallAssembler
	for {
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && len(raw) == 0 {
			// go-openai could not decode an error event.
			err = errors.New("the stream ended with an error event")
		}
		if err != nil {
			if se := hint.streamError(); se != nil {
				return nil, fmt.Errorf("the model endpoint reported an error mid-stream: %w", se)
			}
			return nil, err
		}
		var chunk streamChunk
		if err := json.Unmarshal(raw, &chunk); err != nil {
			return nil, fmt.Errorf("the model endpoint sent a chunk that is not JSON: %w", err)
		}
		if chunk.Error != nil {
			return nil, fmt.Errorf("the model endpoint reported an error mid-stream: %w", chunk.Error)
		}
		if chunk.ID != "" {
			resp.ID = chunk.ID
		}
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.Usage != nil {
			resp.Usage = fromChatUsage(*chunk.Usage)
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			if ch.FinishReason != "" {
				resp.FinishReason = string(ch.FinishReason)
			}
			if d.Content != "" || d.ReasoningContent != "" {
				content.WriteString(d.Content)
				reasoning.WriteString(d.ReasoningContent)
				onDelta(loop.Delta{Text: d.Content, Reasoning: d.ReasoningContent})
			}
			for _, tc := range d.ToolCalls {
				asm.add(tc)
			}
			if d.FunctionCall != nil {
				asm.add(goopenai.ToolCall{Type: goopenai.ToolTypeFunction, Function: *d.FunctionCall})
			}
		}
	}
	resp.Message.Content = content.String()
	resp.Message.Reasoning = reasoning.String()
	resp.Message.ToolCalls = asm.calls()
	return resp, nil
}

// toolCallAssembler joins streamed tool-call fragments, in time linear in
// their total size. A fragment with an index belongs to the call at that
// index; servers that omit the index (Ollama, Gemini's compatibility
// endpoint) start a new call with each new non-empty ID and extend the
// last call otherwise.
type toolCallAssembler struct {
	parts []callParts
	index map[int]int // fragment index → position in parts
}

// callParts is one call being assembled.
type callParts struct {
	id, name string
	args     strings.Builder
}

func (t *toolCallAssembler) add(f goopenai.ToolCall) {
	pos := -1
	switch {
	case f.Index != nil:
		if t.index == nil {
			t.index = map[int]int{}
		}
		p, ok := t.index[*f.Index]
		// Some servers send index 0 for every call: a new ID means a new call.
		if ok && (f.ID == "" || f.ID == t.parts[p].id) {
			pos = p
		} else {
			t.index[*f.Index] = len(t.parts)
		}
	case len(t.parts) > 0 && (f.ID == "" || f.ID == t.parts[len(t.parts)-1].id):
		pos = len(t.parts) - 1
	}
	if pos < 0 {
		t.parts = append(t.parts, callParts{id: f.ID, name: f.Function.Name})
		t.parts[len(t.parts)-1].args.WriteString(f.Function.Arguments)
		return
	}
	c := &t.parts[pos]
	if c.id == "" {
		c.id = f.ID
	}
	if f.Function.Name != "" && c.name != f.Function.Name {
		c.name += f.Function.Name
	}
	c.args.WriteString(f.Function.Arguments)
}

func (t *toolCallAssembler) calls() []loop.ToolRequest {
	if len(t.parts) == 0 {
		return nil
	}
	out := make([]loop.ToolRequest, len(t.parts))
	for i := range t.parts {
		p := &t.parts[i]
		out[i] = loop.ToolRequest{ID: p.id, Name: p.name, Arguments: p.args.String()}
	}
	return out
}
