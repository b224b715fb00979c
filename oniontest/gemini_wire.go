package oniontest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// This file is the reply side of the Gemini wire: the steps as the
// Gemini API answers. The structs mirror generativelanguage.googleapis.com
// as it answered in 2026 (see gemini/testdata/recorded): a whole reply
// pretty-printed, a stream as "data:" events ending in a blank line with
// CRLFs, the first function call of a reply carrying a thought
// signature, Gemini 3's function call IDs left out as Gemini 2.5 leaves
// them (a ToolCall's ID is sent when the step gives one), errors as a
// google.rpc.Status with its details.

type geminiResponse struct {
	Candidates    []geminiCandidate `json:"candidates"`
	UsageMetadata *geminiUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string            `json:"modelVersion"`
	ResponseID    string            `json:"responseId"`
}

type geminiCandidate struct {
	Content       *geminiOutContent `json:"content,omitempty"`
	FinishReason  string            `json:"finishReason,omitempty"`
	Index         int               `json:"index"`
	FinishMessage string            `json:"finishMessage,omitempty"`
}

type geminiOutContent struct {
	Parts []geminiOutPart `json:"parts"`
	Role  string          `json:"role"`
}

type geminiOutPart struct {
	Text             *string        `json:"text,omitempty"`
	Thought          bool           `json:"thought,omitempty"`
	FunctionCall     *geminiOutCall `json:"functionCall,omitempty"`
	ThoughtSignature string         `json:"thoughtSignature,omitempty"`
}

type geminiOutCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	ID   string          `json:"id,omitempty"`
}

type geminiUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
}

// geminiThought is the thought a reply shows when the request asks for
// thoughts (generationConfig.thinkingConfig.includeThoughts).
const geminiThought = "**Answering** oniontest scripted this reply."

// geminiMinCache is the fewest prompt tokens Gemini's implicit cache
// serves (Gemini 2.5 Flash and later).
const geminiMinCache = 1024

// maxGeminiPrompts bounds the earlier prompts kept for the implicit
// cache.
const maxGeminiPrompts = 8

// geminiReply encodes step as the reply to Gemini request number n.
func (s *Server) geminiReply(n int, req Request, step Step) reply {
	g := req.Gemini
	if step.kind == stepRaw {
		if step.rateLimited {
			secs := step.raw.header.Get("Retry-After")
			rep := geminiErrorReply(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED",
				"Resource has been exhausted (oniontest). Please retry in "+secs+"s.", retrySeconds(secs))
			rep.header.Set("Retry-After", secs)
			return rep
		}
		return step.raw.reply()
	}
	if step.kind == stepStreamError {
		return geminiStreamError(n, g, step)
	}
	u := defaultUsage
	if step.usage != nil {
		u = *step.usage
	}
	usage := &geminiUsage{PromptTokenCount: u.PromptTokens, CandidatesTokenCount: u.CompletionTokens,
		TotalTokenCount: u.TotalTokens, CachedContentTokenCount: s.geminiCached(req.Raw, u.PromptTokens)}
	resp := geminiResponse{ModelVersion: g.Model, ResponseID: "oniontest_" + strconv.Itoa(n), UsageMetadata: usage}

	finish := "STOP"
	switch {
	case step.refused:
		finish = "SAFETY"
	case step.truncated:
		finish = "MAX_TOKENS"
	}
	var parts []geminiOutPart
	var message string
	if includeThoughts(g.GenerationConfig) {
		t := geminiThought
		parts = append(parts, geminiOutPart{Text: &t, Thought: true})
	}
	if step.kind == stepToolCalls {
		message = "Model generated function call(s)."
		for i, c := range step.calls {
			var args map[string]json.RawMessage
			if json.Unmarshal([]byte(c.Arguments), &args) != nil || args == nil {
				// The API sends no call it cannot parse: it says so.
				parts, finish = nil, "MALFORMED_FUNCTION_CALL"
				message = "Malformed function call: " + c.Name + c.Arguments
				break
			}
			p := geminiOutPart{FunctionCall: &geminiOutCall{Name: c.Name, Args: json.RawMessage(c.Arguments), ID: c.ID}}
			if i == 0 {
				p.ThoughtSignature = geminiSignature(n)
			}
			parts = append(parts, p)
		}
	} else {
		text := step.text
		parts = append(parts, geminiOutPart{Text: &text})
	}
	cand := geminiCandidate{FinishReason: finish, FinishMessage: message}
	if len(parts) > 0 {
		cand.Content = &geminiOutContent{Parts: parts, Role: "model"}
	}
	if !g.Stream {
		resp.Candidates = []geminiCandidate{cand}
		return reply{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
			pieces: [][]byte{append(indent(resp), '\n')}}
	}

	// Streamed: text a word a chunk, calls whole, the finish reason on
	// the last chunk, the usage so far on every one.
	var events [][]byte
	event := func(c geminiCandidate, u *geminiUsage) {
		r := resp
		r.Candidates, r.UsageMetadata = []geminiCandidate{c}, u
		events = append(events, geminiEvent(marshal(r)))
	}
	partial := &geminiUsage{PromptTokenCount: usage.PromptTokenCount, TotalTokenCount: usage.PromptTokenCount,
		CachedContentTokenCount: usage.CachedContentTokenCount}
	var chunks [][]geminiOutPart
	for _, p := range parts {
		if p.Text != nil && !p.Thought && step.kind != stepToolCalls {
			for _, w := range words(*p.Text) {
				chunks = append(chunks, []geminiOutPart{{Text: &w}})
			}
			continue
		}
		if p.FunctionCall != nil && len(chunks) > 0 && chunks[len(chunks)-1][0].FunctionCall != nil {
			chunks[len(chunks)-1] = append(chunks[len(chunks)-1], p) // parallel calls come in one chunk
			continue
		}
		chunks = append(chunks, []geminiOutPart{p})
	}
	if step.kind == stepToolCalls || len(chunks) == 0 {
		empty := ""
		chunks = append(chunks, []geminiOutPart{{Text: &empty}})
	}
	for i, c := range chunks {
		if i < len(chunks)-1 {
			event(geminiCandidate{Content: &geminiOutContent{Parts: c, Role: "model"}}, partial)
			continue
		}
		last := cand
		last.Content = &geminiOutContent{Parts: c, Role: "model"}
		if finish == "MALFORMED_FUNCTION_CALL" {
			last.Content = nil
		}
		event(last, usage)
	}
	return reply{status: http.StatusOK, header: http.Header{"Content-Type": {"text/event-stream"}}, pieces: events}
}

// geminiEvent frames data as the Gemini API frames an event.
func geminiEvent(data []byte) []byte {
	return append(append([]byte("data: "), data...), "\r\n\r\n"...)
}

// geminiSignature is the thought signature of reply n: opaque bytes, in
// base64 as the API sends them.
func geminiSignature(n int) string {
	return base64.StdEncoding.EncodeToString([]byte("oniontest thought signature #" + strconv.Itoa(n)))
}

// includeThoughts reports whether a generation config asks for thoughts.
func includeThoughts(cfg json.RawMessage) bool {
	var c struct {
		ThinkingConfig struct {
			IncludeThoughts bool `json:"includeThoughts"`
		} `json:"thinkingConfig"`
	}
	return json.Unmarshal(cfg, &c) == nil && c.ThinkingConfig.IncludeThoughts
}

// geminiCached is the prompt tokens Gemini's implicit cache would serve
// for the request body raw: the longest prefix its prompt (system
// instruction, tools, contents, in the order the model reads them)
// shares with an earlier request's, at four bytes a token, when that is
// at least geminiMinCache tokens; never more than prompt. The prompt is
// kept for the requests to come.
func (s *Server) geminiCached(raw []byte, prompt int) int {
	var p struct {
		SystemInstruction json.RawMessage `json:"systemInstruction"`
		Tools             json.RawMessage `json:"tools"`
		Contents          json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return 0
	}
	text := bytes.Join([][]byte{p.SystemInstruction, p.Tools, p.Contents}, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	best := 0
	for _, old := range s.geminiPrompts {
		n := 0
		for n < len(old) && n < len(text) && old[n] == text[n] {
			n++
		}
		best = max(best, n)
	}
	if len(s.geminiPrompts) == maxGeminiPrompts {
		s.geminiPrompts = s.geminiPrompts[1:]
	}
	s.geminiPrompts = append(s.geminiPrompts, text)
	if best/4 < geminiMinCache {
		return 0
	}
	return min(best/4, prompt)
}

// geminiStreamError encodes a StreamError step: streamed, a 200 stream
// whose second event is the error; not streamed, the error itself.
func geminiStreamError(n int, g *GeminiRequest, step Step) reply {
	status, state := http.StatusInternalServerError, "INTERNAL"
	switch step.code {
	case "RESOURCE_EXHAUSTED":
		status, state = http.StatusTooManyRequests, step.code
	case "UNAVAILABLE":
		status, state = http.StatusServiceUnavailable, step.code
	case "INVALID_ARGUMENT":
		status, state = http.StatusBadRequest, step.code
	}
	if !g.Stream {
		return geminiErrorReply(status, state, step.text, 0)
	}
	start := "" // no text yet: the client may send the request again
	first := geminiResponse{ModelVersion: g.Model, ResponseID: "oniontest_" + strconv.Itoa(n),
		Candidates: []geminiCandidate{{Content: &geminiOutContent{Parts: []geminiOutPart{{Text: &start}}, Role: "model"}}}}
	body := marshal(geminiStatusBody(status, state, step.text, 0))
	return reply{status: http.StatusOK, header: http.Header{"Content-Type": {"text/event-stream"}},
		pieces: [][]byte{geminiEvent(marshal(first)), geminiEvent(body)}}
}

// geminiStatus is a google.rpc.Status, as the API sends an error.
type geminiStatus struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status"`
	Details []map[string]any `json:"details,omitempty"`
}

func geminiStatusBody(status int, state, msg string, retry int) any {
	st := geminiStatus{Code: status, Message: msg, Status: state}
	if retry > 0 {
		st.Details = []map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": strconv.Itoa(retry) + "s"}}
	}
	return struct {
		Error geminiStatus `json:"error"`
	}{st}
}

// geminiErrorReply is an error as the Gemini API sends it; retry > 0
// adds a RetryInfo of that many seconds.
func geminiErrorReply(status int, state, msg string, retry int) reply {
	return reply{status: status, header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
		pieces: [][]byte{append(indent(geminiStatusBody(status, state, msg, retry)), '\n')}}
}

// geminiStateOf is the google.rpc.Code the API sends with an HTTP
// status.
func geminiStateOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

// wireError is an error reply in the words of the wire of path: the
// Gemini API's for a Gemini path (or any under /v1beta/), OpenAI's for
// any other.
func wireError(path string, status int, msg, typ string) reply {
	if _, _, ok := geminiPath(path); ok || strings.HasPrefix(path, "/v1beta/") {
		return geminiErrorReply(status, geminiStateOf(status), msg, 0)
	}
	if path == anthropicPath {
		return anthropicErrorReply(status, anthropicType(typ), msg)
	}
	return errorReply(status, msg, typ)
}

func retrySeconds(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// indent encodes v as the Gemini API does a whole reply: indented by two
// spaces, <, > and & as they are.
func indent(v any) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, marshal(v), "", "  "); err != nil {
		panic(fmt.Sprintf("oniontest: %v", err)) // only our own wire types get here
	}
	return b.Bytes()
}
