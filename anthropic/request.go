package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/onionkit/onion/loop"
)

// This file writes the body of a request by hand, field by field, so that
// the requests of a run share a byte-stable prefix for the prompt cache:
// the fields that stay the same through a run come first and messages
// last; each message is written the same way every time it is sent; and a
// cache breakpoint is a "cache_control" key added at the end of a block,
// so that moving it leaves every other byte where it was.

// maxBreakpoints is the most blocks with cache_control a request may have.
const maxBreakpoints = 4

// encode writes the body of req for model.
func (m *Model) encode(req *loop.Request, model string, stream bool) ([]byte, error) {
	system, msgs, err := wireMessages(req.Messages)
	if err != nil {
		return nil, err
	}
	tools, err := m.toolsJSON(req.Tools)
	if err != nil {
		return nil, err
	}
	noCalls := false
	if len(tools) == 0 {
		// The last request of a run that hit its cap or its budget comes
		// without tools: the tools of the run's other requests are sent
		// all the same, the same bytes, with tool_choice none, so that the
		// cached prefix still holds and the calls in the conversation
		// still have their tools.
		tools = m.lastTools(req.Messages)
		noCalls = len(tools) > 0
	}
	b := make([]byte, 0, 1024+len(tools)+16*len(msgs))
	b = append(b, `{"model":`...)
	b = appendString(b, model)
	b = append(b, `,"max_tokens":`...)
	b = strconv.AppendInt(b, int64(m.maxTokens), 10)
	if stream {
		b = append(b, `,"stream":true`...)
	}
	switch {
	case m.thinking.adaptive:
		b = append(b, `,"thinking":{"type":"adaptive"}`...)
	case m.thinking.budget > 0:
		b = append(b, `,"thinking":{"type":"enabled","budget_tokens":`...)
		b = strconv.AppendInt(b, int64(m.thinking.budget), 10)
		b = append(b, '}')
	case req.Temperature != nil:
		t := float64(*req.Temperature)
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("temperature %v is not a number JSON can carry", t)
		}
		b = append(b, `,"temperature":`...)
		b = strconv.AppendFloat(b, t, 'g', -1, 32)
	}
	if req.Format != nil {
		schema, err := outputSchema(req.Format.Schema)
		if err != nil {
			return nil, fmt.Errorf("the answer's schema %q: %w", req.Format.Name, err)
		}
		b = append(b, `,"output_config":{"format":{"type":"json_schema","schema":`...)
		b = append(b, schema...)
		b = append(b, "}}"...)
	}
	if len(tools) > 0 {
		b = append(b, `,"tools":`...)
		b = append(b, tools...)
	}
	marks := 0
	if len(tools) > 0 && m.cache {
		marks++ // the last tool's
	}
	if len(system) > 0 {
		if m.cache {
			last := len(system) - 1
			system[last] = m.mark(system[last])
			marks++
		}
		b = append(b, `,"system":`...)
		b = appendBlocks(b, system)
	}
	if m.cache {
		for _, i := range breakpoints(msgs, maxBreakpoints-marks) {
			last := len(msgs[i].blocks) - 1
			msgs[i].blocks[last] = m.mark(msgs[i].blocks[last])
		}
	}
	b = append(b, `,"messages":[`...)
	for i, w := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":"`...)
		b = append(b, w.role...)
		b = append(b, `","content":`...)
		b = appendBlocks(b, w.blocks)
		b = append(b, '}')
	}
	b = append(b, ']')
	if noCalls {
		// After the messages, so that the bytes before them stay those of
		// the run's other requests.
		b = append(b, `,"tool_choice":{"type":"none"}`...)
	}
	return append(b, '}'), nil
}

// breakpoints returns the messages whose last block gets a cache
// breakpoint, at most n: the newest message, and the newest user message
// before the newest assistant message, the one the previous request of a
// run ended with and marked, so that what it wrote to the cache is read
// back exactly.
func breakpoints(msgs []wireMessage, n int) []int {
	if n <= 0 || len(msgs) == 0 {
		return nil
	}
	out := []int{len(msgs) - 1}
	seenAssistant := false
	for i := len(msgs) - 2; i >= 0 && len(out) < n; i-- {
		switch {
		case msgs[i].role == "assistant":
			seenAssistant = true
		case seenAssistant:
			return append(out, i)
		}
	}
	return out
}

// mark returns block with a cache breakpoint: the key added before its
// closing brace, every other byte as it was.
func (m *Model) mark(block []byte) []byte {
	block = bytes.TrimRight(block, " \t\r\n")
	out := make([]byte, 0, len(block)+48)
	out = append(out, block[:len(block)-1]...)
	if inner := bytes.TrimSpace(out[1:]); len(inner) > 0 {
		out = append(out, ',')
	}
	if m.ttl == "" {
		out = append(out, `"cache_control":{"type":"ephemeral"}}`...)
	} else {
		out = append(out, `"cache_control":{"type":"ephemeral","ttl":"`...)
		out = append(out, m.ttl...)
		out = append(out, `"}}`...)
	}
	return out
}

// appendBlocks appends blocks as a JSON array.
func appendBlocks(b []byte, blocks [][]byte) []byte {
	b = append(b, '[')
	for i, bl := range blocks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, bl...)
	}
	return append(b, ']')
}

// toolsJSON returns the tools array of defs, the last tool with a cache
// breakpoint when the Model caches; nil for no tools. The agent's tools
// are the same in every request of its runs: they are encoded once.
func (m *Model) toolsJSON(defs []loop.ToolDef) ([]byte, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tools.same(defs) {
		return m.tools.json, nil
	}
	blocks := make([][]byte, len(defs))
	for i, d := range defs {
		bl, err := toolJSON(d)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", d.Name, err)
		}
		blocks[i] = bl
	}
	if m.cache {
		blocks[len(blocks)-1] = m.mark(blocks[len(blocks)-1])
	}
	m.tools = toolsCache{defs: append([]loop.ToolDef(nil), defs...), json: appendBlocks(nil, blocks)}
	return m.tools.json, nil
}

// lastTools returns the tools array of the Model's last request with
// tools, when msgs hold calls of its tools; nil otherwise.
func (m *Model) lastTools(msgs []loop.Message) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tools.json == nil {
		return nil
	}
	for _, msg := range msgs {
		for _, c := range msg.ToolCalls {
			for _, d := range m.tools.defs {
				if d.Name == c.Name {
					return m.tools.json
				}
			}
		}
	}
	return nil
}

// toolsCache is the last tools array encoded.
type toolsCache struct {
	defs []loop.ToolDef
	json []byte
}

// same reports whether defs are the tools c encoded.
func (c *toolsCache) same(defs []loop.ToolDef) bool {
	if c.json == nil || len(c.defs) != len(defs) {
		return false
	}
	for i := range defs {
		x, y := &c.defs[i], &defs[i]
		if x.Name != y.Name || x.Description != y.Description || x.Strict != y.Strict || !bytes.Equal(x.Parameters, y.Parameters) {
			return false
		}
	}
	return true
}

// toolJSON is one tool definition. A strict tool's schema is held to what
// Anthropic's strict mode takes (see outputSchema); any other goes as it
// is.
func toolJSON(d loop.ToolDef) ([]byte, error) {
	schema := bytes.TrimSpace(d.Parameters)
	if len(schema) == 0 || string(schema) == "null" {
		schema = []byte(`{"type":"object","properties":{}}`)
	}
	if !json.Valid(schema) {
		return nil, errors.New("its parameters are not a JSON document")
	}
	if d.Strict {
		s, err := outputSchema(schema)
		if err != nil {
			return nil, err
		}
		schema = s
	}
	b := append([]byte(nil), `{"name":`...)
	b = appendString(b, d.Name)
	if d.Description != "" {
		b = append(b, `,"description":`...)
		b = appendString(b, d.Description)
	}
	b = append(b, `,"input_schema":`...)
	b = append(b, schema...)
	if d.Strict {
		b = append(b, `,"strict":true`...)
	}
	return append(b, '}'), nil
}

// appendString appends s as a JSON string, escaping only what JSON
// requires (no \u003c for <): a tool's result goes as the tool wrote it.
// Invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}
