package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/genai"

	"github.com/onionkit/onion/loop"
)

// This file reads a reply: the first candidate's parts as the assistant
// message (text, thoughts as reasoning, function calls as tool calls),
// the parts themselves kept in Message.Items when sending them back
// rebuilt would lose something (a thought signature above all), the
// finish reason in Gemini's words, and the usage. A stream is the same
// reply in chunks: text and thoughts are handed on as they come, parts
// are gathered (adjacent text of one kind joined, never across a
// signature) and read once the stream ends.

// reply is the Response of a whole reply.
func reply(resp *genai.GenerateContentResponse) (*loop.Response, error) {
	if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return nil, noCandidate(resp)
	}
	c := resp.Candidates[0]
	var parts []*genai.Part
	if c.Content != nil {
		parts = c.Content.Parts
	}
	if err := malformed(c.FinishReason, c.FinishMessage, parts); err != nil {
		return nil, err
	}
	return response(resp.ResponseID, resp.ModelVersion, parts, string(c.FinishReason), resp.UsageMetadata)
}

// errMalformedCall is a reply that ended with the model failing to write
// a function call (finishReason MALFORMED_FUNCTION_CALL) and holds
// nothing else: the same request may well succeed.
var errMalformedCall = errors.New("the model wrote a malformed function call (finishReason MALFORMED_FUNCTION_CALL)")

// malformed is the error of a reply that ended with a malformed call and
// holds no part.
func malformed(finish genai.FinishReason, message string, parts []*genai.Part) error {
	if finish != genai.FinishReasonMalformedFunctionCall {
		return nil
	}
	for _, p := range parts {
		if p != nil && !(textOnly(p) && p.Text == "") {
			return nil
		}
	}
	if message != "" {
		return fmt.Errorf("%w: %s", errMalformedCall, bound(message))
	}
	return errMalformedCall
}

// noCandidate is the error of a reply with no candidate: a blocked
// prompt, or an empty reply.
func noCandidate(resp *genai.GenerateContentResponse) error {
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
		msg := "the prompt was blocked: " + string(pf.BlockReason)
		if pf.BlockReasonMessage != "" {
			msg += ": " + bound(pf.BlockReasonMessage)
		}
		return errors.New(msg)
	}
	return errors.New("the reply has no candidate")
}

// response is the Response of a reply made of parts.
func response(id, model string, parts []*genai.Part, finish string, u *genai.GenerateContentResponseUsageMetadata) (*loop.Response, error) {
	out := &loop.Response{ID: id, Model: model, FinishReason: finish, Usage: usage(u)}
	msg := &out.Message
	msg.Role = loop.RoleAssistant
	var text, thoughts strings.Builder
	keep := false // sending the parts rebuilt would lose something
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch {
		case p.FunctionCall != nil:
			b, err := json.Marshal(p.FunctionCall.Args)
			if err != nil {
				return nil, fmt.Errorf("function call %q: %w", bound(p.FunctionCall.Name), err)
			}
			if p.FunctionCall.Args == nil {
				b = []byte("{}")
			}
			msg.ToolCalls = append(msg.ToolCalls, loop.ToolRequest{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: string(b)})
		case p.Thought:
			thoughts.WriteString(p.Text)
			keep = true
		case p.Text != "":
			text.WriteString(p.Text)
		case !textOnly(p):
			keep = true // code, data, or a part of a kind onion has no field for
		}
		keep = keep || len(p.ThoughtSignature) > 0
	}
	msg.Content, msg.Reasoning = text.String(), thoughts.String()
	if keep {
		b, err := json.Marshal(parts)
		if err != nil {
			return nil, fmt.Errorf("keeping the reply's parts: %w", err)
		}
		msg.Items, msg.ItemsFrom = b, itemsFrom
	}
	return out, nil
}

// textOnly reports whether p is text (a thought's or not) and nothing
// else: no signature, no other field, of this genai version or a later.
func textOnly(p *genai.Part) bool {
	q := *p
	q.Text, q.Thought = "", false
	b, err := json.Marshal(&q)
	return err == nil && string(b) == "{}"
}

// usage is the reply's usage in onion's terms: completion tokens count
// the thoughts too, as onion counts reasoning in them.
func usage(u *genai.GenerateContentResponseUsageMetadata) loop.Usage {
	if u == nil {
		return loop.Usage{}
	}
	return loop.Usage{
		PromptTokens:     int(u.PromptTokenCount),
		CompletionTokens: int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount),
		TotalTokens:      int(u.TotalTokenCount),
		CachedTokens:     int(u.CachedContentTokenCount),
		ReasoningTokens:  int(u.ThoughtsTokenCount),
	}
}

// maxParts bounds the parts a stream gathers: a reply of more is no
// answer anyone asked for.
const maxParts = 10000

// stream gathers a streamed reply.
type stream struct {
	parts   []*genai.Part
	finish  string
	message string // the finish message
	id      string
	model   string
	usage   *genai.GenerateContentResponseUsageMetadata
	chunks  int
	failed  error
}

// add takes one chunk, handing its text and thoughts to onDelta.
func (s *stream) add(chunk *genai.GenerateContentResponse, onDelta func(loop.Delta)) {
	if chunk == nil || s.failed != nil {
		return
	}
	s.chunks++
	if chunk.ResponseID != "" {
		s.id = chunk.ResponseID
	}
	if chunk.ModelVersion != "" {
		s.model = chunk.ModelVersion
	}
	if chunk.UsageMetadata != nil {
		s.usage = chunk.UsageMetadata // each chunk's counts are the reply's so far
	}
	if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
		if pf := chunk.PromptFeedback; pf != nil && pf.BlockReason != "" {
			s.failed = noCandidate(chunk)
		}
		return
	}
	c := chunk.Candidates[0]
	if c.FinishReason != "" {
		s.finish, s.message = string(c.FinishReason), c.FinishMessage
	}
	if c.Content == nil {
		return
	}
	for _, p := range c.Content.Parts {
		if p == nil {
			continue
		}
		switch {
		case p.Thought && p.Text != "":
			onDelta(loop.Delta{Reasoning: p.Text})
		case p.FunctionCall == nil && p.Text != "":
			onDelta(loop.Delta{Text: p.Text})
		}
		s.append(p)
	}
}

// append adds p to the parts gathered: joined to the last one when both
// are plain text of the same kind (thought or not) and neither carries a
// signature, which belongs to its own part.
func (s *stream) append(p *genai.Part) {
	if n := len(s.parts); n > 0 {
		last := s.parts[n-1]
		if textOnly(last) && textOnly(p) && last.Thought == p.Thought {
			joined := *last
			joined.Text += p.Text
			s.parts[n-1] = &joined
			return
		}
	}
	if len(s.parts) >= maxParts {
		s.failed = fmt.Errorf("the stream holds more than %d parts", maxParts)
		return
	}
	s.parts = append(s.parts, p)
}

// response is the Response of the stream once it has ended, or why it is
// no reply: it failed, or it broke off before its finish reason.
func (s *stream) response() (*loop.Response, error) {
	if s.failed != nil {
		return nil, s.failed
	}
	if s.finish == "" {
		return nil, fmt.Errorf("the stream ended after %d chunks without a finish reason: %w", s.chunks, io.ErrUnexpectedEOF)
	}
	if err := malformed(genai.FinishReason(s.finish), s.message, s.parts); err != nil {
		return nil, err
	}
	var parts []*genai.Part
	for _, p := range s.parts {
		if textOnly(p) && p.Text == "" {
			continue // the empty text of the last chunk
		}
		parts = append(parts, p)
	}
	return response(s.id, s.model, parts, s.finish, s.usage)
}
