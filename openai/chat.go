package openai

import (
	"context"
	"errors"
	"fmt"

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
	// emptyLimit is the client's EmptyMessagesLimit, which bounds the
	// lines in a row of a stream that are not data.
	emptyLimit uint
}

func newChatModel(client *goopenai.Client) *chatModel {
	return &chatModel{client: client, splice: splices(client), tools: toolsCache{encode: chatTools}, emptyLimit: emptyLimit(client)}
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
		resp, err = m.once(ctx, creq, hint)
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
	out := goopenai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
	if !itemsOf(m).reasoning {
		// go-openai has no member for the other, nor for a call's
		// extra_content.
		out.ReasoningContent = m.Reasoning
	}
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

func (m *chatModel) once(ctx context.Context, req goopenai.ChatCompletionRequest, hint *retryHint) (*loop.Response, error) {
	hint.keep = true
	resp, err := m.client.CreateChatCompletion(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("the model endpoint returned no choices")
	}
	ch := resp.Choices[0]
	out := &loop.Response{ID: resp.ID, Model: resp.Model, Message: fromChatMessage(ch.Message),
		FinishReason: string(ch.FinishReason), Usage: fromChatUsage(resp.Usage)}
	replyItems(hint.kept, &out.Message)
	refused(out, ch.Message.Refusal != "", ch.Message.Refusal)
	return out, nil
}

// refused marks r, whose reply carried a refusal (Chat Completions'
// refusal member, the Responses API's refusal part), as refused: its
// finish reason "refusal" (see loop.Response.Refused) where the server
// said it stopped as usual, and the refusal its text when it had none.
func refused(r *loop.Response, refusal bool, text string) {
	if !refusal {
		return
	}
	if r.Message.Content == "" {
		r.Message.Content = text
	}
	if r.FinishReason == "" || r.FinishReason == "stop" {
		r.FinishReason = "refusal"
	}
}
