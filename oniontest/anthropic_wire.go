package oniontest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
)

// The structs below mirror the Messages API as api.anthropic.com sent it
// in 2026 (see anthropic/testdata/recorded): the same keys in the same
// order, the nulls included. Each reply is built from the same Steps as
// the other wires: Text is a text block, ToolCalls tool_use blocks,
// WithThinking a signed thinking block before them, Truncated the stop
// reason max_tokens, StreamError an error event.

type anthropicMessage struct {
	Model        string            `json:"model"`
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	Role         string            `json:"role"`
	Content      []json.RawMessage `json:"content"`
	StopReason   *string           `json:"stop_reason"`
	StopSequence *string           `json:"stop_sequence"`
	StopDetails  *struct{}         `json:"stop_details"`
	Usage        anthropicUsage    `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreation            struct {
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	OutputTokens int    `json:"output_tokens"`
	ServiceTier  string `json:"service_tier"`
	InferenceGeo string `json:"inference_geo"`
}

// anthropicDeltaUsage is the usage of message_delta: the totals so far.
type anthropicDeltaUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type anthropicText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicThinking struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type anthropicToolUse struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// The stream's events.

type anthropicStart struct {
	Type    string           `json:"type"`
	Message anthropicMessage `json:"message"`
}

type anthropicBlockStart struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"`
}

type anthropicBlockDelta struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta any    `json:"delta"`
}

type anthropicTextDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicThinkingDelta struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type anthropicSignatureDelta struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

type anthropicJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type anthropicBlockStop struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type anthropicMessageDelta struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage anthropicDeltaUsage `json:"usage"`
}

type anthropicErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id,omitempty"`
}

// ThinkingSignature is the signature the server gives a thinking block
// of text (WithThinking): a test can check that the agent sent the block
// back with it.
func ThinkingSignature(text string) string {
	sum := sha256.Sum256([]byte("oniontest thinking\x00" + text))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// WithThinking returns a copy of s whose reply, on the Anthropic wire,
// begins with a thinking block of text signed with
// ThinkingSignature(text); streamed, thinking_delta events, one per word,
// then a signature_delta. The other wires leave it out.
func (s Step) WithThinking(text string) Step {
	s.thinking = &text
	return s
}

// WithCache returns a copy of s reporting, on the Anthropic wire, read
// prompt tokens read from the cache and write written to it
// (cache_read_input_tokens, cache_creation_input_tokens), out of the
// prompt tokens of WithUsage (or the default usage): input_tokens is the
// rest. The other wires leave it out.
func (s Step) WithCache(read, write int) Step {
	s.cacheRead, s.cacheWrite = max(read, 0), max(write, 0)
	return s
}

// Overloaded returns a Step that replies 529 with the body
// api.anthropic.com sends when it is overloaded.
func Overloaded() Step {
	rep := anthropicErrorReply(529, "overloaded_error", "Overloaded")
	return ReplayStatus(rep.status, "application/json", rep.pieces[0])
}

// anthropicReply encodes a Text, ToolCalls or StreamError step as the
// reply to Messages request number n.
func anthropicReply(n int, req Request, step Step) reply {
	ar := req.Anthropic
	if step.kind == stepStreamError && !ar.Stream {
		status := anthropicStatus[step.code]
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return anthropicErrorReply(status, step.code, step.text)
	}
	msg := anthropicMessage{Model: ar.Model, ID: "msg_oniontest_" + strconv.Itoa(n), Type: "message", Role: "assistant",
		Content: []json.RawMessage{}}
	if msg.Model == "" {
		msg.Model = "oniontest"
	}
	u := defaultUsage
	if step.usage != nil {
		u = *step.usage
	}
	var usage anthropicUsage
	usage.CacheReadInputTokens, usage.CacheCreationInputTokens = step.cacheRead, step.cacheWrite
	usage.InputTokens = max(u.PromptTokens-step.cacheRead-step.cacheWrite, 0)
	usage.CacheCreation.Ephemeral5m = step.cacheWrite
	usage.OutputTokens, usage.ServiceTier, usage.InferenceGeo = u.CompletionTokens, "standard", "not_available"
	msg.Usage = usage
	stop := "end_turn"
	switch {
	case step.refused:
		stop = "refusal"
	case step.truncated:
		stop = "max_tokens"
	case step.kind == stepToolCalls:
		stop = "tool_use"
	}

	var blocks []json.RawMessage
	if step.thinking != nil {
		blocks = append(blocks, marshal(anthropicThinking{Type: "thinking", Thinking: *step.thinking, Signature: ThinkingSignature(*step.thinking)}))
	}
	if step.kind == stepToolCalls {
		for _, c := range step.calls {
			blocks = append(blocks, marshal(anthropicToolUse{Type: "tool_use", ID: c.ID, Name: c.Name, Input: toolInput(c.Arguments)}))
		}
	} else if step.kind == stepText && step.text != "" {
		blocks = append(blocks, marshal(anthropicText{Type: "text", Text: step.text}))
	}
	if !ar.Stream {
		msg.Content = append(msg.Content, blocks...)
		msg.StopReason = &stop
		return reply{
			status: http.StatusOK,
			header: http.Header{"Content-Type": {"application/json"}},
			pieces: [][]byte{marshal(msg)},
		}
	}

	var events [][]byte
	event := func(typ string, v any) {
		events = append(events, append([]byte("event: "+typ+"\ndata: "), append(marshal(v), "\n\n"...)...))
	}
	start := msg
	start.Usage.OutputTokens = 1
	event("message_start", anthropicStart{Type: "message_start", Message: start})
	index := 0
	if step.thinking != nil {
		event("content_block_start", anthropicBlockStart{Type: "content_block_start", Index: index,
			ContentBlock: anthropicThinking{Type: "thinking"}})
		event("ping", map[string]string{"type": "ping"})
		for _, w := range words(*step.thinking) {
			event("content_block_delta", anthropicBlockDelta{Type: "content_block_delta", Index: index,
				Delta: anthropicThinkingDelta{Type: "thinking_delta", Thinking: w}})
		}
		event("content_block_delta", anthropicBlockDelta{Type: "content_block_delta", Index: index,
			Delta: anthropicSignatureDelta{Type: "signature_delta", Signature: ThinkingSignature(*step.thinking)}})
		event("content_block_stop", anthropicBlockStop{Type: "content_block_stop", Index: index})
		index++
	}
	switch step.kind {
	case stepStreamError:
		event("error", anthropicErrorValue(step.code, step.text))
		return reply{status: http.StatusOK, header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, pieces: events}
	case stepToolCalls:
		for _, c := range step.calls {
			event("content_block_start", anthropicBlockStart{Type: "content_block_start", Index: index,
				ContentBlock: anthropicToolUse{Type: "tool_use", ID: c.ID, Name: c.Name, Input: json.RawMessage("{}")}})
			pieces := []string{""} // api.anthropic.com opens with an empty partial_json
			if step.whole {
				pieces = append(pieces, c.Arguments)
			} else {
				pieces = append(pieces, split(c.Arguments, argumentFragment)...)
			}
			for _, p := range pieces {
				event("content_block_delta", anthropicBlockDelta{Type: "content_block_delta", Index: index,
					Delta: anthropicJSONDelta{Type: "input_json_delta", PartialJSON: p}})
			}
			event("content_block_stop", anthropicBlockStop{Type: "content_block_stop", Index: index})
			index++
		}
	default:
		if step.text != "" {
			event("content_block_start", anthropicBlockStart{Type: "content_block_start", Index: index,
				ContentBlock: anthropicText{Type: "text"}})
			for _, w := range words(step.text) {
				event("content_block_delta", anthropicBlockDelta{Type: "content_block_delta", Index: index,
					Delta: anthropicTextDelta{Type: "text_delta", Text: w}})
			}
			event("content_block_stop", anthropicBlockStop{Type: "content_block_stop", Index: index})
		}
	}
	md := anthropicMessageDelta{Type: "message_delta"}
	md.Delta.StopReason = stop
	md.Usage = anthropicDeltaUsage{InputTokens: usage.InputTokens, CacheCreationInputTokens: usage.CacheCreationInputTokens,
		CacheReadInputTokens: usage.CacheReadInputTokens, OutputTokens: usage.OutputTokens}
	event("message_delta", md)
	event("message_stop", map[string]string{"type": "message_stop"})
	return reply{status: http.StatusOK, header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, pieces: events}
}

// toolInput is a call's arguments as a tool_use block's input: the JSON
// as given when it is JSON, else the text as a JSON string, so that a
// test's malformed arguments still make a reply.
func toolInput(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	return marshal(args)
}

// anthropicStatus is the HTTP status of each error type.
var anthropicStatus = map[string]int{
	"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403, "not_found_error": 404,
	"request_too_large": 413, "rate_limit_error": 429, "api_error": 500, "overloaded_error": 529,
}

func anthropicErrorValue(typ, msg string) anthropicErrorBody {
	e := anthropicErrorBody{Type: "error"}
	e.Error.Type, e.Error.Message = typ, msg
	return e
}

// anthropicErrorReply is an error reply in the Messages API's shape.
func anthropicErrorReply(status int, typ, msg string) reply {
	e := anthropicErrorValue(typ, msg)
	e.RequestID = "req_oniontest"
	return reply{
		status: status,
		header: http.Header{"Content-Type": {"application/json"}},
		pieces: [][]byte{marshal(e)},
	}
}

// anthropicType is the Messages API's error type for one of the OpenAI
// types the server's own errors use.
func anthropicType(openaiType string) string {
	if openaiType == "server_error" {
		return "api_error"
	}
	return "invalid_request_error"
}
