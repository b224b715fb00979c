package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/onionkit/onion/loop"
)

// This file reads a streamed reply with the SDK's event stream:
// message_start, then for each content block content_block_start, its
// deltas and content_block_stop, then message_delta (the stop reason and
// the usage so far) and message_stop. Text and thinking deltas go to the
// caller as they come; a tool call's input_json_delta pieces are joined
// into its arguments.

// maxReplyText bounds the text a streamed reply may gather: its text,
// thinking, signatures and arguments together.
const maxReplyText = 32 << 20

func (m *Model) stream(ctx context.Context, params sdk.MessageNewParams, opts []option.RequestOption, h *hint, onDelta func(loop.Delta)) (*loop.Response, error) {
	s := m.client.Messages.NewStreaming(ctx, params, opts...)
	defer s.Close()
	resp, spoke, err := readStream(s, onDelta)
	if err != nil {
		return nil, m.modelError(err, h, spoke)
	}
	return resp, nil
}

// readStream reads the reply of s; spoke says a delta went to onDelta.
func readStream(s *ssestream.Stream[sdk.MessageStreamEventUnion], onDelta func(loop.Delta)) (resp *loop.Response, spoke bool, err error) {
	var st streamState
	for !st.done && s.Next() {
		if err := st.event(s.Current(), onDelta); err != nil {
			return nil, st.spoke, err
		}
	}
	if err := s.Err(); err != nil {
		return nil, st.spoke, err
	}
	if !st.done {
		return nil, st.spoke, fmt.Errorf("the stream ended before message_stop: %w", io.ErrUnexpectedEOF)
	}
	return st.response(), st.spoke, nil
}

// streamState is a streamed reply as far as it has come.
type streamState struct {
	resp    loop.Response
	blocks  []*block
	byIndex map[int64]*block
	usage   struct{ input, cacheRead, cacheWrite, output, thinking int64 }
	size    int  // bytes of text gathered, against maxReplyText
	spoke   bool // a delta went to the caller
	started bool // message_start came
	done    bool // message_stop came
}

// event takes the next event of the stream.
func (st *streamState) event(ev sdk.MessageStreamEventUnion, onDelta func(loop.Delta)) error {
	switch ev.Type {
	case "message_start":
		if st.started {
			return errors.New("a second message_start")
		}
		st.started = true
		msg := ev.Message
		st.resp.ID, st.resp.Model = msg.ID, string(msg.Model)
		u := msg.Usage
		st.usage.input, st.usage.cacheRead, st.usage.cacheWrite = u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens
		st.usage.output, st.usage.thinking = u.OutputTokens, u.OutputTokensDetails.ThinkingTokens
	case "content_block_start":
		if st.byIndex == nil {
			st.byIndex = map[int64]*block{}
		}
		if _, dup := st.byIndex[ev.Index]; dup {
			return fmt.Errorf("content block %d started twice", ev.Index)
		}
		if len(st.blocks) >= maxBlocks {
			return fmt.Errorf("more than %d content blocks", maxBlocks)
		}
		cb := ev.ContentBlock
		bl := &block{typ: cb.Type}
		switch cb.Type {
		case "text":
			bl.text.WriteString(cb.Text)
		case "thinking":
			bl.text.WriteString(cb.Thinking)
			bl.signature.WriteString(cb.Signature)
		case "redacted_thinking":
			bl.data = cb.Data
		case "tool_use":
			bl.id, bl.name = cb.ID, cb.Name
			// The input comes in input_json_delta events; a server that
			// sends it whole in the start is read too.
			if in := cb.JSON.Input.Raw(); in != "" && in != "{}" && in != "null" {
				bl.input.WriteString(in)
			}
		default:
			bl.raw = []byte(cb.RawJSON())
		}
		if err := st.grow(bl.text.Len() + bl.signature.Len() + len(bl.data) + bl.input.Len() + len(bl.raw)); err != nil {
			return err
		}
		st.byIndex[ev.Index] = bl
		st.blocks = append(st.blocks, bl)
	case "content_block_delta":
		bl, ok := st.byIndex[ev.Index]
		if !ok {
			return fmt.Errorf("a delta for content block %d, which did not start", ev.Index)
		}
		return st.delta(bl, ev.Delta, onDelta)
	case "message_delta":
		if r := ev.Delta.StopReason; r != "" {
			st.resp.FinishReason = string(r)
		}
		// The counts of message_delta are the totals so far.
		u := ev.Usage
		if u.JSON.InputTokens.Valid() {
			st.usage.input = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			st.usage.cacheRead = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			st.usage.cacheWrite = u.CacheCreationInputTokens
		}
		if u.JSON.OutputTokens.Valid() {
			st.usage.output = u.OutputTokens
		}
		if u.OutputTokensDetails.JSON.ThinkingTokens.Valid() {
			st.usage.thinking = u.OutputTokensDetails.ThinkingTokens
		}
	case "message_stop":
		if !st.started {
			return errors.New("message_stop before message_start")
		}
		st.done = true
	}
	return nil
}

// delta adds a content_block_delta to its block.
func (st *streamState) delta(bl *block, d sdk.MessageStreamEventUnionDelta, onDelta func(loop.Delta)) error {
	var piece string
	switch d.Type {
	case "text_delta":
		piece = d.Text
	case "thinking_delta":
		piece = d.Thinking
	case "signature_delta":
		piece = d.Signature
	case "input_json_delta":
		piece = d.PartialJSON
	default:
		return nil // citations_delta and others onion does not keep
	}
	if err := st.grow(len(piece)); err != nil {
		return err
	}
	want := map[string]string{"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "thinking", "input_json_delta": "tool_use"}[d.Type]
	if bl.typ != want {
		return fmt.Errorf("a %s for a %s block", d.Type, bl.typ)
	}
	switch d.Type {
	case "text_delta":
		bl.text.WriteString(piece)
		if piece != "" && onDelta != nil {
			st.spoke = true
			onDelta(loop.Delta{Text: piece})
		}
	case "thinking_delta":
		bl.text.WriteString(piece)
		if piece != "" && onDelta != nil {
			st.spoke = true
			onDelta(loop.Delta{Reasoning: piece})
		}
	case "signature_delta":
		bl.signature.WriteString(piece)
	case "input_json_delta":
		bl.input.WriteString(piece)
	}
	return nil
}

// grow counts n more bytes of text.
func (st *streamState) grow(n int) error {
	st.size += n
	if st.size > maxReplyText {
		return fmt.Errorf("the reply's text is over %d bytes", maxReplyText)
	}
	return nil
}

func (st *streamState) response() *loop.Response {
	resp := st.resp
	resp.Message = message(st.blocks)
	u := st.usage
	resp.Usage = usage(u.input, u.cacheRead, u.cacheWrite, u.output, u.thinking)
	return &resp
}
