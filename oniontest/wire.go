package oniontest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// The structs below mirror the wire shape of api.openai.com field for field
// and in the same order, including the keys that are always null there.
// They are kept apart from go-openai's types, which drop or reshape some of
// them (content null, usage null, choices []).

type completion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []choice `json:"choices"`
	Usage             usage    `json:"usage"`
	SystemFingerprint *string  `json:"system_fingerprint"`
}

type choice struct {
	Index        int       `json:"index"`
	Message      message   `json:"message"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

type message struct {
	Role        string     `json:"role"`
	Content     *string    `json:"content"` // null beside tool calls
	ToolCalls   []toolCall `json:"tool_calls,omitempty"`
	Refusal     *string    `json:"refusal"`
	Annotations []struct{} `json:"annotations"`
}

type toolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON document inside a string
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

var defaultUsage = usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}

type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint *string       `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	// Usage is absent unless the request set stream_options.include_usage;
	// then it is null on every chunk but the last.
	Usage json.RawMessage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"` // absent, null or a string
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    *int          `json:"index,omitempty"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// meta is what every body or chunk of one reply shares.
type meta struct {
	id      string
	created int64
	model   string
}

// reply is an HTTP reply split into the pieces that are flushed one at a
// time: SSE events for a stream, a single piece otherwise.
type reply struct {
	status int
	header http.Header
	pieces [][]byte
}

const (
	argumentFragment = 5 // bytes of arguments per streamed delta, at least
	doneEvent        = "data: [DONE]\n\n"
)

// finishReason is the finish_reason of a Text or ToolCalls step.
func finishReason(s Step) string {
	switch {
	case s.refused:
		return "content_filter"
	case s.truncated:
		return "length"
	case s.kind == stepToolCalls:
		return "tool_calls"
	}
	return "stop"
}

// completionReply encodes a Text or ToolCalls step as one chat.completion.
func completionReply(m meta, s Step, u usage) reply {
	msg := message{Role: "assistant", Annotations: []struct{}{}}
	finish := finishReason(s)
	if s.kind == stepToolCalls {
		for _, c := range s.calls {
			msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: c.ID, Type: "function",
				Function: function{Name: c.Name, Arguments: c.Arguments}})
		}
	} else {
		msg.Content = &s.text
	}
	body := marshal(completion{
		ID: m.id, Object: "chat.completion", Created: m.created, Model: m.model,
		Choices: []choice{{Message: msg, FinishReason: finish}},
		Usage:   u,
	})
	return reply{
		status: http.StatusOK,
		header: http.Header{"Content-Type": {"application/json"}},
		pieces: [][]byte{append(body, '\n')},
	}
}

// streamReply encodes a Text or ToolCalls step as chat.completion.chunk
// events: a role-only chunk, the content or tool-call deltas, a chunk with
// finish_reason, the usage chunk if asked for, and [DONE].
func streamReply(m meta, s Step, u usage, includeUsage bool) reply {
	var events [][]byte
	event := func(d delta, finish string) {
		c := chunk{ID: m.id, Object: "chat.completion.chunk", Created: m.created, Model: m.model,
			Choices: []chunkChoice{{Delta: d}}}
		if finish != "" {
			c.Choices[0].FinishReason = &finish
		}
		if includeUsage {
			c.Usage = jsonNull
		}
		events = append(events, sse(marshal(c)))
	}

	finish := finishReason(s)
	if s.kind == stepToolCalls {
		event(delta{Role: "assistant", Content: jsonNull}, "")
		for i, c := range s.calls {
			index := &i
			if s.noIndex {
				index = nil
			}
			if s.whole {
				event(delta{ToolCalls: []toolCallDelta{{Index: index, ID: c.ID, Type: "function",
					Function: functionDelta{Name: c.Name, Arguments: c.Arguments}}}}, "")
				continue
			}
			event(delta{ToolCalls: []toolCallDelta{{Index: index, ID: c.ID, Type: "function",
				Function: functionDelta{Name: c.Name}}}}, "")
			for _, frag := range split(c.Arguments, argumentFragment) {
				event(delta{ToolCalls: []toolCallDelta{{Index: index,
					Function: functionDelta{Arguments: frag}}}}, "")
			}
		}
	} else {
		event(delta{Role: "assistant", Content: marshal("")}, "")
		for _, w := range words(s.text) {
			event(delta{Content: marshal(w)}, "")
		}
	}
	event(delta{}, finish)
	if includeUsage {
		events = append(events, sse(marshal(chunk{ID: m.id, Object: "chat.completion.chunk",
			Created: m.created, Model: m.model, Choices: []chunkChoice{}, Usage: marshal(u)})))
	}
	events = append(events, []byte(doneEvent))
	return reply{
		status: http.StatusOK,
		header: http.Header{"Content-Type": {"text/event-stream"}},
		pieces: events,
	}
}

// reply serves r verbatim, split into SSE events (after each blank
// line) when it is a stream so that each event is flushed on its own.
func (r rawReply) reply() reply {
	h := http.Header{"Content-Type": {r.contentType}}
	for k, v := range r.header {
		h[k] = v
	}
	pieces := [][]byte{r.body}
	if strings.HasPrefix(r.contentType, "text/event-stream") {
		pieces = splitEvents(r.body)
	}
	return reply{status: r.status, header: h, pieces: pieces}
}

// splitEvents cuts an event stream after each blank line (LF or CRLF,
// as the Gemini API ends its events); the last piece may have none.
func splitEvents(b []byte) [][]byte {
	var pieces [][]byte
	for len(b) > 0 {
		i := bytes.Index(b, []byte("\n\n"))
		if j := bytes.Index(b, []byte("\n\r\n")); j >= 0 && (i < 0 || j < i) {
			i = j + 1
		}
		if i < 0 {
			i = len(b)
		} else {
			i += 2
		}
		pieces, b = append(pieces, b[:i]), b[i:]
	}
	return pieces
}

// errorReply is an OpenAI-shaped error reply.
func errorReply(status int, msg, typ string) reply {
	return reply{
		status: status,
		header: http.Header{"Content-Type": {"application/json"}},
		pieces: [][]byte{errorBody(msg, typ, "")},
	}
}

// errorBody is the body api.openai.com sends with an error status. An empty
// code is sent as null.
func errorBody(msg, typ, code string) []byte {
	type apiError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	e := apiError{Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	return append(marshal(struct {
		Error apiError `json:"error"`
	}{e}), '\n')
}

var jsonNull = json.RawMessage("null")

func sse(data []byte) []byte {
	return append(append([]byte("data: "), data...), "\n\n"...)
}

// marshal encodes v as api.openai.com does, without escaping <, > and &.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("oniontest: " + err.Error()) // only our own wire types get here
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// words splits s before each space, so "a b" streams as "a", " b".
func words(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s[1:], ' ') + 1
		if i == 0 {
			i = len(s)
		}
		out, s = append(out, s[:i]), s[i:]
	}
	return out
}

// split cuts s into pieces of at least n bytes, never inside a UTF-8
// sequence (JSON would turn half a rune into U+FFFD).
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := min(n, len(s))
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		out, s = append(out, s[:i]), s[i:]
	}
	return out
}
