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

// This file keeps the streams as the wires read them before they read
// the events themselves (commit 114757a): go-openai's stream reader, each
// chunk decoded into go-openai's ChatCompletionStreamResponse, each event
// into a streamEvent by encoding/json. The differential tests hold the
// wires to it. One fix: its tool-call assembler kept strings.Builders in
// a slice that append copied, which panicked when a server interleaved
// the fragments of two calls; here each call is kept behind a pointer.
// Two additions, read from the chunk by encoding/json beside go-openai's
// type, which has no field for them: the reasoning member some servers
// send in place of reasoning_content (a string; any other is none),
// each tool call's extra_content, and OpenRouter's reasoning_details; and
// a refusal marks the reply refused.

// legacyStreamChunk is a stream chunk plus the error some servers put
// inside a 200 stream.
type legacyStreamChunk struct {
	goopenai.ChatCompletionStreamResponse
	Error *goopenai.APIError `json:"error,omitempty"`
}

func legacyChatStream(ctx context.Context, client *goopenai.Client, req goopenai.ChatCompletionRequest, onDelta func(loop.Delta), hint *retryHint) (*loop.Response, error) {
	req.Stream = true
	req.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	stream, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	resp := &loop.Response{Message: loop.Message{Role: loop.RoleAssistant}}
	var content, reasoning, refusal strings.Builder
	var asm legacyAssembler
	var field reasoningField
	var details detailsAssembler
	for {
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil && len(raw) == 0 {
			err = errors.New("the stream ended with an error event")
		}
		if err != nil {
			if se := hint.streamError(); se != nil {
				return nil, fmt.Errorf("the model endpoint reported an error mid-stream: %w", se)
			}
			return nil, err
		}
		var chunk legacyStreamChunk
		if err := json.Unmarshal(raw, &chunk); err != nil {
			return nil, fmt.Errorf("the model endpoint sent a chunk that is not JSON: %w", err)
		}
		var alt struct {
			Choices []struct {
				Delta struct {
					Reasoning        json.RawMessage `json:"reasoning"`
					ReasoningDetails json.RawMessage `json:"reasoning_details"`
					ToolCalls        []struct {
						ExtraContent json.RawMessage `json:"extra_content"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		_ = json.Unmarshal(raw, &alt)
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
		for i, ch := range chunk.Choices {
			d := ch.Delta
			if ch.FinishReason != "" {
				resp.FinishReason = string(ch.FinishReason)
			}
			var r string
			if i < len(alt.Choices) {
				_ = json.Unmarshal(alt.Choices[i].Delta.Reasoning, &r)
			}
			if i < len(alt.Choices) && string(alt.Choices[i].Delta.ReasoningDetails) != "null" {
				details.add(alt.Choices[i].Delta.ReasoningDetails)
			}
			if d.ReasoningContent == "" && r != "" {
				d.ReasoningContent, field = r, reasoningMember
			}
			if d.Content != "" || d.ReasoningContent != "" {
				content.WriteString(d.Content)
				reasoning.WriteString(d.ReasoningContent)
				onDelta(loop.Delta{Text: d.Content, Reasoning: d.ReasoningContent})
			}
			if d.Refusal != "" {
				refusal.WriteString(d.Refusal)
				onDelta(loop.Delta{Text: d.Refusal})
			}
			for j, tc := range d.ToolCalls {
				var extra json.RawMessage
				if i < len(alt.Choices) && j < len(alt.Choices[i].Delta.ToolCalls) {
					if x := alt.Choices[i].Delta.ToolCalls[j].ExtraContent; string(x) != "null" {
						extra = x
					}
				}
				asm.add(tc, extra)
			}
			if d.FunctionCall != nil {
				asm.add(goopenai.ToolCall{Type: goopenai.ToolTypeFunction, Function: *d.FunctionCall}, nil)
			}
		}
	}
	resp.Message.Content = content.String()
	resp.Message.Reasoning = reasoning.String()
	resp.Message.ToolCalls = asm.calls()
	var it chatItems
	if resp.Message.Reasoning != "" && field == reasoningMember {
		it.ReasoningField = "reasoning"
	}
	it.ToolCallExtra = extras(len(asm.parts), func(i int) []byte { return asm.parts[i].extra })
	it.ReasoningDetails = details.result()
	it.keep(&resp.Message)
	if refusal.Len() > 0 {
		if resp.Message.Content == "" {
			resp.Message.Content = refusal.String()
		}
		if resp.FinishReason == "" || resp.FinishReason == "stop" {
			resp.FinishReason = "refusal"
		}
	}
	return resp, nil
}

type legacyAssembler struct {
	parts []*legacyCallParts
	index map[int]int
}

type legacyCallParts struct {
	id, name string
	args     strings.Builder
	extra    []byte
}

func (t *legacyAssembler) add(f goopenai.ToolCall, extra json.RawMessage) {
	pos := -1
	switch {
	case f.Index != nil:
		if t.index == nil {
			t.index = map[int]int{}
		}
		p, ok := t.index[*f.Index]
		if ok && (f.ID == "" || f.ID == t.parts[p].id) {
			pos = p
		} else {
			t.index[*f.Index] = len(t.parts)
		}
	case len(t.parts) > 0 && (f.ID == "" || f.ID == t.parts[len(t.parts)-1].id):
		pos = len(t.parts) - 1
	}
	if pos < 0 {
		t.parts = append(t.parts, &legacyCallParts{id: f.ID, name: f.Function.Name, extra: extra})
		t.parts[len(t.parts)-1].args.WriteString(f.Function.Arguments)
		return
	}
	c := t.parts[pos]
	if extra != nil {
		c.extra = extra
	}
	if c.id == "" {
		c.id = f.ID
	}
	if f.Function.Name != "" && c.name != f.Function.Name {
		c.name += f.Function.Name
	}
	c.args.WriteString(f.Function.Arguments)
}

func (t *legacyAssembler) calls() []loop.ToolRequest {
	if len(t.parts) == 0 {
		return nil
	}
	out := make([]loop.ToolRequest, len(t.parts))
	for i, p := range t.parts {
		out[i] = loop.ToolRequest{ID: p.id, Name: p.name, Arguments: p.args.String()}
	}
	return out
}

func legacyResponsesStream(ctx context.Context, client *goopenai.Client, req goopenai.CreateResponseRequest, onDelta func(loop.Delta), hint *retryHint) (*loop.Response, error) {
	stream, err := client.CreateResponseStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	a := responseAssembler{onDelta: onDelta}
	for {
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			if a.allDone() {
				return a.response()
			}
			return nil, fmt.Errorf("the model endpoint's stream ended before the response completed: %w", io.ErrUnexpectedEOF)
		}
		if err == nil && len(raw) == 0 {
			err = errors.New("the stream ended with an error event")
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
				continue
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
