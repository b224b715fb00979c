package openai

import (
	"bytes"
	"encoding/json"

	"github.com/onionkit/onion/loop"
)

// This file is what Chat Completions keeps of a reply beyond onion's own
// fields, in loop.Message.Items (ItemsFrom "openai-chat"), to send back as
// it came: the member the reasoning came in, when a server used
// "reasoning" rather than reasoning_content (Groq, OpenRouter, Ollama,
// newer vLLM), each tool call's extra_content, where Gemini's
// OpenAI-compatible endpoint puts a Gemini 3 call's thought signature,
// without which it refuses the next request, and OpenRouter's
// reasoning_details (details.go).

// chatItemsFrom is the ItemsFrom of a message whose Items this wire wrote.
const chatItemsFrom = "openai-chat"

// chatItems is the JSON of such Items.
type chatItems struct {
	// ReasoningField is "reasoning" when the reasoning came in that
	// member; "" for reasoning_content.
	ReasoningField string `json:"reasoning_field,omitempty"`
	// ToolCallExtra is the extra_content of each tool call, by its place
	// in the message; null for a call without one.
	ToolCallExtra []json.RawMessage `json:"tool_call_extra,omitempty"`
	// ReasoningDetails is OpenRouter's reasoning_details of the reply, as
	// it came or, streamed, put together (details.go).
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
}

// reasoningOnly is the Items of a message whose reasoning came in
// "reasoning" and whose calls carry no extra_content, as keep writes them.
const reasoningOnly = `{"reasoning_field":"reasoning"}`

// maxExtraBytes bounds one tool call's extra_content, kept and sent back:
// a thought signature is a few kilobytes at most.
const maxExtraBytes = 64 << 10

// reasoningField is the member a reply's reasoning came in.
type reasoningField uint8

const (
	reasoningContent reasoningField = iota // reasoning_content: DeepSeek, llama.cpp
	reasoningMember                        // reasoning: Groq, OpenRouter, Ollama, newer vLLM
)

// keep records it in m, unless it holds nothing.
func (it chatItems) keep(m *loop.Message) {
	if it.ReasoningField == "" && it.ToolCallExtra == nil && it.ReasoningDetails == nil {
		return
	}
	if b, err := json.Marshal(it); err == nil {
		m.Items, m.ItemsFrom = b, chatItemsFrom
	}
}

// itemsView is what a request reads of a message's Items: parts of them
// as they are, not copies, so that a long history of such messages costs
// no allocation per request.
type itemsView struct {
	reasoning bool   // the reasoning came in "reasoning"
	extras    []byte // tool_call_extra as written: a JSON array, or nil
	details   []byte // reasoning_details, checked by detailsOK, or nil
}

// itemsOf reads the Items this wire wrote in m; the zero itemsView for
// any other. Items from outside (a restored history) are held to what the
// wire writes: a reasoning member of the two names, extras that are JSON
// objects within maxExtraBytes and details that detailsOK takes (any other
// is left out).
func itemsOf(m *loop.Message) itemsView {
	if m.ItemsFrom != chatItemsFrom || len(m.Items) == 0 {
		return itemsView{}
	}
	if string(m.Items) == reasoningOnly {
		return itemsView{reasoning: true}
	}
	if !json.Valid(m.Items) {
		return itemsView{}
	}
	var v itemsView
	var s scanner
	s.reset(m.Items)
	if s.object() {
		for first := true; ; first = false {
			name, special, ok := s.member(first)
			if !ok {
				break
			}
			switch {
			case special:
				s.fail()
			case string(name) == "reasoning_field":
				t, _ := s.text()
				v.reasoning = t.is("reasoning")
			case string(name) == "tool_call_extra":
				v.extras = s.value()
			case string(name) == "reasoning_details":
				v.details = s.value()
			default:
				s.other(name, special, itemsNames)
			}
		}
	}
	if s.failed {
		// Not as the wire writes them (a name twice, in another case,
		// escaped; a member of another type): as encoding/json reads them.
		v = decodedItems(m.Items)
	}
	if v.details != nil && !detailsOK(v.details) {
		v.details = nil
	}
	return v
}

// itemsNames are the members of Items that itemsOf reads.
var itemsNames = []string{"reasoning_field", "tool_call_extra", "reasoning_details"}

// decodedItems is itemsOf's reading of Items the scanner gave up on.
func decodedItems(items []byte) itemsView {
	var it chatItems
	if json.Unmarshal(items, &it) != nil {
		return itemsView{}
	}
	v := itemsView{reasoning: it.ReasoningField == "reasoning", details: it.ReasoningDetails}
	if it.ToolCallExtra != nil {
		v.extras, _ = json.Marshal(it.ToolCallExtra)
	}
	return v
}

// extraOK reports whether x is an extra_content to keep: a JSON object
// within maxExtraBytes.
func extraOK(x []byte) bool {
	x = bytes.TrimSpace(x)
	return len(x) >= 2 && len(x) <= maxExtraBytes && x[0] == '{' && json.Valid(x)
}

// extraAt is the extra_content of tool call i, nil for none or one that
// extraOK refuses.
func (v itemsView) extraAt(i int) []byte {
	if v.extras == nil {
		return nil
	}
	var s scanner
	s.reset(v.extras)
	if !s.array() {
		return nil
	}
	for k, first := 0, true; s.elem(first); k, first = k+1, false {
		x := s.value()
		if s.failed {
			return nil
		}
		if k == i {
			if extraOK(x) {
				return x
			}
			return nil
		}
	}
	return nil
}

// replyItems reads into msg what go-openai's decoding of a whole reply,
// body, left out: the reasoning member and each tool call's
// extra_content of its first choice. body is nil when it was not kept
// whole.
func replyItems(body []byte, msg *loop.Message) {
	if !bytes.Contains(body, []byte(`"reasoning`)) && !bytes.Contains(body, []byte(`"extra_content"`)) {
		return
	}
	var r struct {
		Choices []struct {
			Message struct {
				Reasoning        string          `json:"reasoning"`
				ReasoningDetails json.RawMessage `json:"reasoning_details"`
				ToolCalls        []struct {
					ExtraContent json.RawMessage `json:"extra_content"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &r) != nil || len(r.Choices) == 0 {
		return
	}
	m := r.Choices[0].Message
	var it chatItems
	if msg.Reasoning == "" && m.Reasoning != "" {
		msg.Reasoning, it.ReasoningField = m.Reasoning, "reasoning"
	}
	if len(m.ToolCalls) == len(msg.ToolCalls) {
		it.ToolCallExtra = extras(len(m.ToolCalls), func(i int) []byte { return m.ToolCalls[i].ExtraContent })
	}
	if detailsOK(m.ReasoningDetails) {
		it.ReasoningDetails = bytes.Clone(bytes.TrimSpace(m.ReasoningDetails))
	}
	it.keep(msg)
}

// extras is the extra_content of n calls, by at; nil when none has one
// to keep.
func extras(n int, at func(i int) []byte) []json.RawMessage {
	var out []json.RawMessage
	for i := range n {
		if x := at(i); extraOK(x) {
			if out == nil {
				out = make([]json.RawMessage, n)
			}
			out[i] = bytes.Clone(bytes.TrimSpace(x))
		}
	}
	return out
}
