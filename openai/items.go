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

// itemsOf reads the Items this wire wrote in m; the zero chatItems for
// any other. Items from outside (a restored history) are held to what the
// wire writes: a reasoning member of the two names, and extras that are
// JSON objects within maxExtraBytes (any other is left out).
func itemsOf(m *loop.Message) chatItems {
	if m.ItemsFrom != chatItemsFrom || len(m.Items) == 0 {
		return chatItems{}
	}
	if string(m.Items) == reasoningOnly {
		// The common case, read without decoding: a long history of
		// such messages costs no allocation per request.
		return chatItems{ReasoningField: "reasoning"}
	}
	var it chatItems
	if json.Unmarshal(m.Items, &it) != nil {
		return chatItems{}
	}
	if it.ReasoningField != "reasoning" {
		it.ReasoningField = ""
	}
	for i, x := range it.ToolCallExtra {
		if !extraOK(x) {
			it.ToolCallExtra[i] = nil
		}
	}
	if it.ReasoningDetails != nil && !detailsOK(it.ReasoningDetails) {
		it.ReasoningDetails = nil
	}
	return it
}

// extraOK reports whether x is an extra_content to keep: a JSON object
// within maxExtraBytes.
func extraOK(x []byte) bool {
	x = bytes.TrimSpace(x)
	return len(x) >= 2 && len(x) <= maxExtraBytes && x[0] == '{' && json.Valid(x)
}

// extraAt is the extra_content of m's tool call i, nil for none.
func (it chatItems) extraAt(i int) json.RawMessage {
	if i < len(it.ToolCallExtra) {
		return it.ToolCallExtra[i]
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
