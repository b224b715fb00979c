package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// This file is Chat Completions streamed: the chunks read, their deltas
// passed on as they come, the tool-call fragments assembled, and the
// errors some servers put inside a 200 stream.

func (m *chatModel) stream(ctx context.Context, req goopenai.ChatCompletionRequest, onDelta func(loop.Delta), hint *retryHint) (*loop.Response, error) {
	req.Stream = true
	req.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	hint.stream = true
	stream, err := m.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	events := hint.events(stream, m.emptyLimit)
	resp := &loop.Response{Message: loop.Message{Role: loop.RoleAssistant}}
	var content, reasoning, refusal strings.Builder
	var asm toolCallAssembler
	// The member the reasoning came in: reasoning_content (DeepSeek,
	// llama.cpp), or reasoning (Groq, OpenRouter, Ollama, newer vLLM).
	var field reasoningField
	var details detailsAssembler
	var chunk chatChunk
	for {
		raw, err := events.RecvRaw()
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
		if err := chunk.decode(raw); err != nil {
			return nil, fmt.Errorf("the model endpoint sent a chunk that is not JSON: %w", err)
		}
		if chunk.err != nil {
			return nil, fmt.Errorf("the model endpoint reported an error mid-stream: %w", chunk.err)
		}
		// The ID, model and finish reason repeat from chunk to chunk:
		// each is made a string once.
		if !chunk.id.isEmpty() && !chunk.id.is(resp.ID) {
			resp.ID = chunk.id.String()
		}
		if !chunk.model.isEmpty() && !chunk.model.is(resp.Model) {
			resp.Model = chunk.model.String()
		}
		if chunk.usage != nil {
			resp.Usage = fromChatUsage(*chunk.usage)
		}
		for i := range chunk.choices {
			ch := &chunk.choices[i]
			if !ch.finish.isEmpty() && !ch.finish.is(resp.FinishReason) {
				resp.FinishReason = ch.finish.String()
			}
			r := ch.reasoning
			if r.isEmpty() && !ch.reasoningAlt.isEmpty() {
				r, field = ch.reasoningAlt, reasoningMember
			}
			if !ch.content.isEmpty() || !r.isEmpty() {
				d := loop.Delta{Text: ch.content.String(), Reasoning: r.String()}
				content.WriteString(d.Text)
				reasoning.WriteString(d.Reasoning)
				onDelta(d)
			}
			if ch.details != nil {
				details.add(ch.details)
			}
			if !ch.refusal.isEmpty() {
				// A refusal is shown as it comes, as text.
				d := loop.Delta{Text: ch.refusal.String()}
				refusal.WriteString(d.Text)
				onDelta(d)
			}
			for j := range ch.calls {
				asm.add(&ch.calls[j])
			}
			if ch.hasFunction {
				asm.add(&ch.function)
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
	it.ToolCallExtra = asm.extras()
	it.ReasoningDetails = details.result()
	it.keep(&resp.Message)
	refused(resp, refusal.Len() > 0, refusal.String())
	return resp, nil
}

// chatChunk is what the wire reads of one chunk of a stream, reused from
// chunk to chunk. Its strings are those of the chunk, valid until the
// next is read.
type chatChunk struct {
	id, model jsonText
	choices   []chunkChoice
	usage     *goopenai.Usage
	err       *goopenai.APIError // an error some servers send inside a 200 stream
	scan      scanner
}

type chunkChoice struct {
	content, reasoning, finish jsonText
	reasoningAlt               jsonText // the reasoning member
	details                    []byte   // OpenRouter's reasoning_details as it came; nil for none
	refusal                    jsonText // the refusal member
	calls                      []callFragment
	function                   callFragment // the legacy function_call
	hasFunction                bool
}

// callFragment is a piece of a streamed tool call.
type callFragment struct {
	index          int
	hasIndex       bool
	id, name, args jsonText
	extra          []byte // its extra_content as it came; nil for none
}

// decode reads data into c as encoding/json decodes it into a
// chatChunkJSON: by scanner when it can, else by encoding/json.
func (c *chatChunk) decode(data []byte) error {
	if c.read(data) {
		return nil
	}
	var j chatChunkJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	c.set(&j)
	return nil
}

// chatChunkJSON is the part of go-openai's ChatCompletionStreamResponse
// the wire reads, with the same Go types, plus the error some servers send.
// Fields the wire does not read are not decoded: a value of another type
// than go-openai's in one of them no longer fails the stream.
type chatChunkJSON struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content          string                 `json:"content"`
			ReasoningContent string                 `json:"reasoning_content"`
			Reasoning        json.RawMessage        `json:"reasoning"` // a string; any other is none
			ReasoningDetails json.RawMessage        `json:"reasoning_details"`
			Refusal          string                 `json:"refusal"`
			FunctionCall     *goopenai.FunctionCall `json:"function_call"`
			ToolCalls        []struct {
				Index        *int                  `json:"index"`
				ID           string                `json:"id"`
				Function     goopenai.FunctionCall `json:"function"`
				ExtraContent json.RawMessage       `json:"extra_content"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *goopenai.Usage    `json:"usage"`
	Error *goopenai.APIError `json:"error"`
}

// set makes c the chunk encoding/json decoded.
func (c *chatChunk) set(j *chatChunkJSON) {
	text := func(s string) jsonText { return jsonText{raw: []byte(s)} }
	*c = chatChunk{id: text(j.ID), model: text(j.Model), usage: j.Usage, err: j.Error, choices: c.choices[:0], scan: c.scan}
	for _, jc := range j.Choices {
		ch := c.nextChoice()
		ch.content, ch.reasoning, ch.finish = text(jc.Delta.Content), text(jc.Delta.ReasoningContent), text(jc.FinishReason)
		var r string
		if json.Unmarshal(jc.Delta.Reasoning, &r) == nil {
			ch.reasoningAlt = text(r)
		}
		if string(jc.Delta.ReasoningDetails) != "null" {
			ch.details = jc.Delta.ReasoningDetails
		}
		ch.refusal = text(jc.Delta.Refusal)
		for _, jt := range jc.Delta.ToolCalls {
			f := ch.nextCall()
			f.id, f.name, f.args = text(jt.ID), text(jt.Function.Name), text(jt.Function.Arguments)
			if string(jt.ExtraContent) != "null" {
				f.extra = jt.ExtraContent
			}
			if jt.Index != nil {
				f.index, f.hasIndex = *jt.Index, true
			}
		}
		if fc := jc.Delta.FunctionCall; fc != nil {
			ch.function, ch.hasFunction = callFragment{name: text(fc.Name), args: text(fc.Arguments)}, true
		}
	}
}

// nextChoice appends a choice to c, reusing the room of an earlier one.
func (c *chatChunk) nextChoice() *chunkChoice {
	if n := len(c.choices); n < cap(c.choices) {
		c.choices = c.choices[:n+1]
		ch := &c.choices[n]
		*ch = chunkChoice{calls: ch.calls[:0]}
		return ch
	}
	c.choices = append(c.choices, chunkChoice{})
	return &c.choices[len(c.choices)-1]
}

func (ch *chunkChoice) nextCall() *callFragment {
	ch.calls = append(ch.calls, callFragment{})
	return &ch.calls[len(ch.calls)-1]
}

// The members of a chunk the scanner reads, as bits, to find one that
// comes twice (which goes to encoding/json).
const (
	mID = 1 << iota
	mModel
	mChoices
	mUsage
	mError
	mDelta
	mFinish
	mContent
	mReasoning
	mReasoningAlt
	mToolCalls
	mFunctionCall
	mIndex
	mFunction
	mName
	mArguments
	mExtra
	mDetails
	mRefusal
)

// once gives up if the member bit was already read in this object.
func (s *scanner) once(seen *uint32, bit uint32) {
	if *seen&bit != 0 {
		s.fail()
	}
	*seen |= bit
}

// The names of the members of each object of a chunk that the wire reads.
var (
	chunkNames    = []string{"id", "model", "choices", "usage", "error"}
	choiceNames   = []string{"delta", "finish_reason"}
	deltaNames    = []string{"content", "reasoning_content", "reasoning", "reasoning_details", "refusal", "tool_calls", "function_call"}
	callNames     = []string{"index", "id", "function", "extra_content"}
	functionNames = []string{"name", "arguments"}
)

// read reads data into c by scanner; false if it gave up.
func (c *chatChunk) read(data []byte) bool {
	s := &c.scan
	s.reset(data)
	c.id, c.model, c.usage, c.err = jsonText{}, jsonText{}, nil, nil
	c.choices = c.choices[:0]
	if !s.object() {
		return false
	}
	var seen uint32
	for first := true; ; first = false {
		name, special, ok := s.member(first)
		if !ok {
			break
		}
		switch string(name) {
		case "id":
			s.once(&seen, mID)
			c.id, _ = s.text()
		case "model":
			s.once(&seen, mModel)
			c.model, _ = s.text()
		case "choices":
			s.once(&seen, mChoices)
			c.readChoices(s)
		case "usage":
			// The last chunk's usage, and an error, go to encoding/json.
			s.once(&seen, mUsage)
			if !s.null() {
				s.fail()
			}
		case "error":
			s.once(&seen, mError)
			if !s.null() {
				s.fail()
			}
		default:
			s.other(name, special, chunkNames)
		}
	}
	return s.end()
}

func (c *chatChunk) readChoices(s *scanner) {
	if s.null() || !s.array() {
		return
	}
	for first := true; s.elem(first); first = false {
		ch := c.nextChoice()
		if s.null() {
			continue
		}
		if !s.object() {
			return
		}
		var seen uint32
		for first := true; ; first = false {
			name, special, ok := s.member(first)
			if !ok {
				break
			}
			switch string(name) {
			case "delta":
				s.once(&seen, mDelta)
				ch.readDelta(s)
			case "finish_reason":
				s.once(&seen, mFinish)
				ch.finish, _ = s.text()
			default:
				s.other(name, special, choiceNames)
			}
		}
	}
}

func (ch *chunkChoice) readDelta(s *scanner) {
	if s.null() || !s.object() {
		return
	}
	var seen uint32
	for first := true; ; first = false {
		name, special, ok := s.member(first)
		if !ok {
			return
		}
		switch string(name) {
		case "content":
			s.once(&seen, mContent)
			ch.content, _ = s.text()
		case "reasoning_content":
			s.once(&seen, mReasoning)
			ch.reasoning, _ = s.text()
		case "reasoning":
			// Not a member of the API: a value other than a string is
			// none, not a broken chunk.
			s.once(&seen, mReasoningAlt)
			if c := s.peek(); c == '"' || c == 'n' {
				ch.reasoningAlt, _ = s.text()
			} else {
				s.skip()
			}
		case "reasoning_details":
			s.once(&seen, mDetails)
			ch.details = s.value()
		case "refusal":
			s.once(&seen, mRefusal)
			ch.refusal, _ = s.text()
		case "tool_calls":
			s.once(&seen, mToolCalls)
			if s.null() || !s.array() {
				continue
			}
			for first := true; s.elem(first); first = false {
				f := ch.nextCall()
				if !s.null() {
					f.read(s, true)
				}
			}
		case "function_call":
			s.once(&seen, mFunctionCall)
			if !s.null() {
				ch.hasFunction = true
				ch.function.read(s, false)
			}
		default:
			s.other(name, special, deltaNames)
		}
	}
}

// read reads a tool call, or with call false a legacy function_call, into f.
func (f *callFragment) read(s *scanner, call bool) {
	if !s.object() {
		return
	}
	names := functionNames
	if call {
		names = callNames
	}
	var seen uint32
	for first := true; ; first = false {
		name, special, ok := s.member(first)
		if !ok {
			return
		}
		switch n := string(name); {
		case call && n == "index":
			s.once(&seen, mIndex)
			var isNull bool
			f.index, isNull = s.integer()
			f.hasIndex = !isNull
		case call && n == "id":
			s.once(&seen, mID)
			f.id, _ = s.text()
		case call && n == "function":
			s.once(&seen, mFunction)
			if !s.null() {
				f.read(s, false)
			}
		case call && n == "extra_content":
			s.once(&seen, mExtra)
			f.extra = s.value()
		case !call && n == "name":
			s.once(&seen, mName)
			f.name, _ = s.text()
		case !call && n == "arguments":
			s.once(&seen, mArguments)
			f.args, _ = s.text()
		default:
			s.other(name, special, names)
		}
	}
}

// toolCallAssembler joins streamed tool-call fragments, in time linear in
// their total size. A fragment with an index belongs to the call at that
// index; servers that omit the index (Ollama, Gemini's compatibility
// endpoint) start a new call with each new non-empty ID and extend the
// last call otherwise. Fragments of several calls may come interleaved.
type toolCallAssembler struct {
	parts []callParts
	index map[int]int // fragment index → position in parts
}

// callParts is one call being assembled.
type callParts struct {
	id, name string
	args     []byte
	extra    []byte // the last extra_content of its fragments
}

func (t *toolCallAssembler) add(f *callFragment) {
	pos := -1
	switch {
	case f.hasIndex:
		if t.index == nil {
			t.index = map[int]int{}
		}
		p, ok := t.index[f.index]
		// Some servers send index 0 for every call: a new ID means a new call.
		if ok && (f.id.isEmpty() || f.id.is(t.parts[p].id)) {
			pos = p
		} else {
			t.index[f.index] = len(t.parts)
		}
	case len(t.parts) > 0 && (f.id.isEmpty() || f.id.is(t.parts[len(t.parts)-1].id)):
		pos = len(t.parts) - 1
	}
	if pos < 0 {
		t.parts = append(t.parts, callParts{id: f.id.String(), name: f.name.String(), args: f.args.appendTo(nil)})
		pos = len(t.parts) - 1
		if f.extra != nil {
			t.parts[pos].extra = bytes.Clone(f.extra)
		}
		return
	}
	c := &t.parts[pos]
	if f.extra != nil {
		c.extra = bytes.Clone(f.extra)
	}
	if c.id == "" {
		c.id = f.id.String()
	}
	if !f.name.isEmpty() && !f.name.is(c.name) {
		c.name += f.name.String()
	}
	c.args = f.args.appendTo(c.args)
}

// extras is the extra_content of each call, as chatItems keeps it.
func (t *toolCallAssembler) extras() []json.RawMessage {
	return extras(len(t.parts), func(i int) []byte { return t.parts[i].extra })
}

func (t *toolCallAssembler) calls() []loop.ToolRequest {
	if len(t.parts) == 0 {
		return nil
	}
	out := make([]loop.ToolRequest, len(t.parts))
	for i := range t.parts {
		p := &t.parts[i]
		out[i] = loop.ToolRequest{ID: p.id, Name: p.name, Arguments: string(p.args)}
	}
	return out
}
