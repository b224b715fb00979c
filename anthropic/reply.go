package anthropic

import (
	"errors"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/onionkit/onion/loop"
)

// This file reads a reply: its content blocks into an assistant message
// (text, reasoning, tool calls, and the blocks themselves as Items when
// they must go back as they came), its stop reason and its usage.

// maxBlocks bounds the content blocks of one reply.
const maxBlocks = 4096

// block is one content block of a reply, whole or being streamed.
type block struct {
	typ       string
	text      strings.Builder // a text block's text, a thinking block's thinking
	signature strings.Builder // a thinking block's signature
	data      string          // a redacted_thinking block's data
	id, name  string          // a tool_use block's
	input     strings.Builder // a tool_use block's input, as JSON text
	raw       []byte          // a block of another type, as it came
}

// message assembles the reply's assistant message from its blocks.
func message(blocks []*block) loop.Message {
	msg := loop.Message{Role: loop.RoleAssistant}
	var content, reasoning strings.Builder
	keep := false // the blocks must go back as they came
	items := []byte{'['}
	n := 0
	add := func(b []byte) {
		if n > 0 {
			items = append(items, ',')
		}
		items = append(items, b...)
		n++
	}
	for _, bl := range blocks {
		switch bl.typ {
		case "text":
			if bl.text.Len() == 0 {
				continue // the API refuses an empty text block
			}
			content.WriteString(bl.text.String())
			add(textBlock(bl.text.String()))
		case "thinking":
			keep = true
			reasoning.WriteString(bl.text.String())
			b := append([]byte(nil), `{"type":"thinking","thinking":`...)
			b = appendString(b, bl.text.String())
			b = append(b, `,"signature":`...)
			b = appendString(b, bl.signature.String())
			add(append(b, '}'))
		case "redacted_thinking":
			keep = true
			b := append([]byte(nil), `{"type":"redacted_thinking","data":`...)
			b = appendString(b, bl.data)
			add(append(b, '}'))
		case "tool_use":
			args := bl.input.String()
			if strings.TrimSpace(args) == "" {
				args = "{}" // a call without arguments streams no input
			}
			msg.ToolCalls = append(msg.ToolCalls, loop.ToolRequest{ID: bl.id, Name: bl.name, Arguments: args})
			add(toolUseBlock(bl.id, bl.name, args))
		default:
			if bl.typ != "" && len(bl.raw) > 0 {
				keep = true
				add(bl.raw)
			}
		}
	}
	msg.Content = content.String()
	msg.Reasoning = reasoning.String()
	if keep {
		msg.Items = append(items, ']')
		msg.ItemsFrom = itemsFrom
	}
	return msg
}

// fromMessage reads a whole reply.
func fromMessage(m *sdk.Message) (*loop.Response, error) {
	if m == nil {
		return nil, errors.New("the reply holds no message")
	}
	if len(m.Content) > maxBlocks {
		return nil, fmt.Errorf("the reply holds %d content blocks, more than %d", len(m.Content), maxBlocks)
	}
	blocks := make([]*block, len(m.Content))
	for i, c := range m.Content {
		bl := &block{typ: c.Type}
		switch c.Type {
		case "text":
			bl.text.WriteString(c.Text)
		case "thinking":
			bl.text.WriteString(c.Thinking)
			bl.signature.WriteString(c.Signature)
		case "redacted_thinking":
			bl.data = c.Data
		case "tool_use":
			bl.id, bl.name = c.ID, c.Name
			bl.input.Write(c.Input)
		default:
			bl.raw = []byte(c.RawJSON())
		}
		blocks[i] = bl
	}
	u := m.Usage
	return &loop.Response{
		ID: m.ID, Model: string(m.Model), Message: message(blocks), FinishReason: string(m.StopReason),
		Usage: usage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens, u.OutputTokensDetails.ThinkingTokens),
	}, nil
}

// usage is a reply's usage in onion's terms: the prompt is every input
// token, those read from the cache and those written to it included.
func usage(input, cacheRead, cacheWrite, output, thinking int64) loop.Usage {
	prompt := int(input + cacheRead + cacheWrite)
	return loop.Usage{
		PromptTokens: prompt, CompletionTokens: int(output), TotalTokens: prompt + int(output),
		CachedTokens: int(cacheRead), CacheWriteTokens: int(cacheWrite), ReasoningTokens: int(thinking),
	}
}
