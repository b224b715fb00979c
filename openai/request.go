package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// This file is the request encoding of the built-in wires. The body of a
// request is written by hand into one buffer: the tools array, encoded
// once per agent, is spliced in as it is, and each message is written once,
// its strings without HTML escaping (a tool result goes on the wire as the
// tool wrote it). go-openai still sends the request, with its client, its
// errors and its streams: it is given a stub of its request type, and the
// HTTP client it sends through (retryAfterRecorder) swaps the body written
// here in for the stub's.

// object writes a JSON object, one field after another. A wire adds a
// top-level field to its requests with one more call.
type object struct {
	b []byte
	// parts are the pieces of the object before b, when shared put a
	// value in it that is sent without being copied.
	parts net.Buffers
	open  bool // a field has been written
}

func (o *object) key(name string) {
	if o.open {
		o.b = append(o.b, ',')
	} else {
		o.b = append(o.b, '{')
		o.open = true
	}
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
}

// raw writes a field whose value is JSON already.
func (o *object) raw(name string, v []byte) {
	o.key(name)
	o.b = append(o.b, v...)
}

// shared writes a field whose value is JSON already, sent as it is
// without being copied into the object's buffer: the tools array, which
// every request of an agent shares. The object goes on writing in the
// rest of its buffer.
func (o *object) shared(name string, v []byte) {
	o.key(name)
	o.parts = append(o.parts, o.b, v)
	o.b = o.b[len(o.b):]
}

// body closes the object and returns it, in pieces.
func (o *object) body() net.Buffers {
	return append(o.parts, o.end())
}

// value writes a field of v encoded as encoding/json does, with nothing
// HTML-escaped: for the few fields that are go-openai's own types.
func (o *object) value(name string, v any) error {
	o.key(name)
	b, err := appendJSON(o.b, v)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	o.b = b
	return nil
}

func (o *object) str(name, v string) {
	o.key(name)
	o.b = appendString(o.b, v)
}

// strOmit writes a string field unless it is empty.
func (o *object) strOmit(name, v string) {
	if v != "" {
		o.str(name, v)
	}
}

func (o *object) boolean(name string, v bool) {
	o.key(name)
	o.b = strconv.AppendBool(o.b, v)
}

// end closes the object and returns the buffer.
func (o *object) end() []byte {
	if !o.open {
		return append(o.b, '{', '}')
	}
	return append(o.b, '}')
}

// appendString appends s as a JSON string with nothing escaped that JSON
// does not require: no \u003c for <, as encoding/json writes by default.
// Invalid UTF-8 becomes U+FFFD, as with encoding/json.
func appendString(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}

// appendTemperature appends t as JSON, which has no NaN or infinity.
func appendTemperature(o *object, t *float32) error {
	if t == nil {
		return nil
	}
	if math.IsNaN(float64(*t)) || math.IsInf(float64(*t), 0) {
		return fmt.Errorf("temperature %v is not a number JSON can carry", *t)
	}
	o.key("temperature")
	o.b = strconv.AppendFloat(o.b, float64(*t), 'g', -1, 32)
	return nil
}

// toolsEncoded counts the tools arrays the wires have encoded, for the
// tests to check that an agent's tools are encoded once.
var toolsEncoded atomic.Int64

// toolsCache holds one wire's encoding of the tools array the agent sends,
// made by the first request that carries it and spliced into every later
// one. A request with other tools (a runtime driving the loop with tools
// of its own) has them encoded for it alone.
type toolsCache struct {
	encode func(b []byte, defs []loop.ToolDef) []byte // the wire's encoding
	last   atomic.Pointer[encodedTools]
	mu     sync.Mutex // held while encoding, so that concurrent first requests encode once
}

type encodedTools struct {
	defs []loop.ToolDef // a copy of the definitions encoded
	json []byte
}

// get returns the tools array of defs.
func (c *toolsCache) get(defs []loop.ToolDef) []byte {
	if e := c.last.Load(); e != nil && sameTools(e.defs, defs) {
		return e.json
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.last.Load(); e != nil && sameTools(e.defs, defs) {
		return e.json
	}
	toolsEncoded.Add(1)
	e := &encodedTools{defs: append([]loop.ToolDef(nil), defs...), json: c.encode(nil, defs)}
	if c.last.Load() == nil {
		c.last.Store(e) // the agent's tools: the first request's
	}
	return e.json
}

// sameTools reports whether a and b define the same tools. The schemas'
// bytes are compared, not copied: an agent's never change, and comparing
// the same bytes is quick.
func sameTools(a, b []loop.ToolDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Name != y.Name || x.Description != y.Description || x.Strict != y.Strict || !bytes.Equal(x.Parameters, y.Parameters) {
			return false
		}
	}
	return true
}

// appendParameters appends a tool's schema, null when it has none.
func appendParameters(b []byte, params []byte) []byte {
	if len(params) == 0 {
		return append(b, "null"...)
	}
	return append(b, params...)
}

// chatTools encodes defs as Chat Completions' tools array.
func chatTools(b []byte, defs []loop.ToolDef) []byte {
	b = append(b, '[')
	for i, d := range defs {
		if i > 0 {
			b = append(b, ',')
		}
		fn := object{b: append(b, `{"function":`...)}
		fn.str("name", d.Name)
		fn.strOmit("description", d.Description)
		if d.Strict {
			fn.boolean("strict", true)
		}
		fn.key("parameters")
		fn.b = appendParameters(fn.b, d.Parameters)
		b = append(fn.end(), `,"type":"function"}`...)
	}
	return append(b, ']')
}

// responsesTools encodes defs as the Responses API's tools array.
func responsesTools(b []byte, defs []loop.ToolDef) []byte {
	b = append(b, '[')
	for i, d := range defs {
		if i > 0 {
			b = append(b, ',')
		}
		fn := object{b: b}
		fn.strOmit("description", d.Description)
		fn.str("name", d.Name)
		fn.key("parameters")
		fn.b = appendParameters(fn.b, d.Parameters)
		if d.Strict {
			fn.boolean("strict", true)
		}
		fn.str("type", "function")
		b = fn.end()
	}
	return append(b, ']')
}

// Fixed fields of the requests.
var (
	includeUsage     = []byte(`{"include_usage":true}`)
	includeEncrypted = []byte(`["` + goopenai.ResponseIncludeReasoningEncryptedContent + `"]`)
)

// bodySize guesses the bytes of a request's body but its tools, so that
// it is written into one buffer: the messages' text and a little for the
// rest.
func bodySize(msgs []loop.Message) int {
	n := 256
	for i := range msgs {
		m := &msgs[i]
		n += len(m.Content) + len(m.Reasoning) + len(m.Items) + 96
		for _, im := range m.Images {
			n += len(im.Data)/3*4 + len(im.URL) + 128 // base64, and a label
		}
		for _, c := range m.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Arguments) + 64
		}
	}
	return n + n/16 // escapes
}

// chatBody is the body of a Chat Completions request for req, its fields
// in go-openai's order: the same bytes as go-openai's but for the HTML
// escapes and the tools array's compaction.
func (m *chatModel) chatBody(req *loop.Request, stream bool) (net.Buffers, error) {
	o := object{b: make([]byte, 0, bodySize(req.Messages))}
	o.str("model", req.Model)
	o.key("messages")
	o.b = append(o.b, '[')
	first := true
	chatMessages(req.Messages, func(m *loop.Message, parts []part) {
		if !first {
			o.b = append(o.b, ',')
		}
		first = false
		o.b = appendChatMessage(o.b, m, parts)
	})
	o.b = append(o.b, ']')
	if err := appendTemperature(&o, req.Temperature); err != nil {
		return nil, err
	}
	o.boolean("stream", stream)
	if req.Format != nil {
		if err := o.value("response_format", chatFormat(req.Format)); err != nil {
			return nil, err
		}
	}
	if len(req.Tools) > 0 {
		o.shared("tools", m.tools.get(req.Tools))
		o.str("tool_choice", "auto")
	}
	if stream {
		o.raw("stream_options", includeUsage)
	}
	return o.body(), nil
}

// appendChatMessage appends m as Chat Completions takes a message, with
// the fields go-openai sends; its content is parts when they are not nil
// (see chatMessages).
func appendChatMessage(b []byte, m *loop.Message, parts []part) []byte {
	o := object{b: b}
	o.str("role", string(m.Role))
	if parts != nil {
		o.key("content")
		o.b = appendChatParts(o.b, parts)
	} else {
		o.strOmit("content", m.Content)
	}
	o.strOmit("name", m.Name)
	it := itemsOf(m)
	switch {
	case it.details != nil:
		// OpenRouter's details hold the reasoning text too; it takes
		// them back alone.
		o.key("reasoning_details")
		o.b = append(o.b, it.details...)
	case it.reasoning:
		o.strOmit("reasoning", m.Reasoning)
	default:
		o.strOmit("reasoning_content", m.Reasoning)
	}
	if len(m.ToolCalls) > 0 {
		o.key("tool_calls")
		o.b = append(o.b, '[')
		for i, c := range m.ToolCalls {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			call := object{b: o.b}
			call.strOmit("id", c.ID)
			call.str("type", "function")
			call.key("function")
			fn := object{b: call.b}
			fn.strOmit("name", c.Name)
			fn.strOmit("arguments", c.Arguments)
			call.b = fn.end()
			if x := it.extraAt(i); x != nil {
				call.key("extra_content")
				call.b = append(call.b, x...)
			}
			o.b = call.end()
		}
		o.b = append(o.b, ']')
	}
	o.strOmit("tool_call_id", m.ToolCallID)
	return o.end()
}

// responsesBody is the body of a Responses API request for req, its
// fields in go-openai's order. The
// leading system messages are the instructions; a chained request
// carries only what came after the last response.
func (m *responsesModel) responsesBody(req *loop.Request, include, stream bool) (net.Buffers, error) {
	msgs := req.Messages
	var instructions []string
	for len(msgs) > 0 && msgs[0].Role == loop.RoleSystem {
		instructions = append(instructions, msgs[0].Content)
		msgs = msgs[1:]
	}
	var previous string
	if m.chain {
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == loop.RoleAssistant && msgs[i].ResponseID != "" {
				previous, msgs = msgs[i].ResponseID, msgs[i+1:]
				break
			}
		}
	}
	o := object{b: make([]byte, 0, bodySize(req.Messages))}
	if include && !m.chain {
		o.raw("include", includeEncrypted)
	}
	o.key("input")
	o.b = append(o.b, '[')
	first := true
	for i := range msgs {
		o.b, first = appendInputItems(o.b, &msgs[i], first)
	}
	o.b = append(o.b, ']')
	o.strOmit("instructions", strings.Join(instructions, "\n\n"))
	o.strOmit("model", req.Model)
	o.strOmit("previous_response_id", previous)
	o.boolean("store", m.chain)
	if stream {
		o.boolean("stream", true)
	}
	if err := appendTemperature(&o, req.Temperature); err != nil {
		return nil, err
	}
	if req.Format != nil {
		if err := o.value("text", responsesFormat(req.Format)); err != nil {
			return nil, err
		}
	}
	if len(req.Tools) > 0 {
		o.str("tool_choice", "auto")
		o.shared("tools", m.tools.get(req.Tools))
	}
	return o.body(), nil
}

// appendInputItems appends the input items of one message, a comma
// before each unless first; it returns whether still none was written.
func appendInputItems(b []byte, m *loop.Message, first bool) ([]byte, bool) {
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	message := func(role, content string) {
		sep()
		o := object{b: b}
		o.str("role", role)
		if len(m.Images) > 0 {
			o.key("content")
			o.b = appendInputParts(o.b, contentParts(m))
		} else {
			o.str("content", content)
		}
		b = o.end()
	}
	switch m.Role {
	case loop.RoleAssistant:
		if items, ok := outputItems(*m); ok {
			for _, it := range items {
				sep()
				b = append(b, it...)
			}
			return b, first
		}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			message(string(m.Role), m.Content)
		}
		for _, c := range m.ToolCalls {
			sep()
			b = appendFunctionCall(b, c)
		}
	case loop.RoleTool:
		sep()
		o := object{b: b}
		o.str("type", "function_call_output")
		o.str("call_id", m.ToolCallID)
		if len(m.Images) > 0 {
			o.key("output")
			o.b = appendInputParts(o.b, contentParts(m))
		} else {
			o.str("output", m.Content)
		}
		b = o.end()
	default:
		message(string(m.Role), m.Content)
	}
	return b, first
}

// appendFunctionCall appends c as a function_call input item.
func appendFunctionCall(b []byte, c loop.ToolRequest) []byte {
	o := object{b: b}
	o.str("type", "function_call")
	o.str("call_id", c.ID)
	o.str("name", c.Name)
	o.str("arguments", c.Arguments)
	return o.end()
}

// chatFormat is f as Chat Completions' response_format.
func chatFormat(f *loop.Format) *goopenai.ChatCompletionResponseFormat {
	if f == nil {
		return nil
	}
	return &goopenai.ChatCompletionResponseFormat{Type: goopenai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}}
}

// responsesFormat is f as the Responses API's text.format.
func responsesFormat(f *loop.Format) *goopenai.ResponseTextConfig {
	if f == nil {
		return nil
	}
	return &goopenai.ResponseTextConfig{Format: &goopenai.ResponseTextFormat{Type: "json_schema",
		Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}}
}

// appendJSON appends the JSON encoding of v as an encoding/json Encoder
// with SetEscapeHTML(false) writes it, without the newline: the values of
// go-openai's types the wires send, and the output items go-openai
// decoded, unchanged but for the order of their keys.
func appendJSON(b []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}
