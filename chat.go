package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/onionkit/onion/loop"
	"github.com/sashabaranov/go-openai"
)

// This file is the built-in wire: a LanguageModel speaking Chat
// Completions through go-openai, plain or streamed, with the assembly of
// streamed tool-call fragments and the Retry-After and mid-stream errors
// that go-openai does not surface.

// chatModel sends requests to a Chat Completions endpoint.
type chatModel struct {
	client *openai.Client
	// splice says the client sends the bodies chatBody writes (see
	// request.go); otherwise go-openai's requests go as they are.
	splice bool
	tools  toolsCache
}

func newChatModel(client *openai.Client) *chatModel {
	return &chatModel{client: client, splice: splices(client), tools: toolsCache{encode: chatTools}}
}

func (m *chatModel) Generate(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	ctx, hint := withRetryAfter(ctx)
	var creq openai.ChatCompletionRequest
	if m.splice {
		body, err := m.chatBody(req, onDelta != nil)
		if err != nil {
			return nil, err
		}
		hint.body = body
		// The stub go-openai checks the model and temperature of, and
		// sends with body in its place.
		creq.Model = req.Model
		if req.Temperature != nil {
			creq.Temperature = *req.Temperature
		}
	} else {
		creq = chatRequest(req)
	}
	var resp *Response
	var err error
	if onDelta != nil {
		resp, err = m.stream(ctx, creq, onDelta, hint)
	} else {
		resp, err = m.once(ctx, creq)
	}
	if err != nil {
		return nil, modelError(err, hint, "Chat Completions")
	}
	return resp, nil
}

// chatRequest is req as go-openai sends it, for a client that does not
// splice.
func chatRequest(req *Request) openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{Model: req.Model, Messages: make([]openai.ChatCompletionMessage, len(req.Messages))}
	for i, m := range req.Messages {
		out.Messages[i] = chatMessage(m)
	}
	if req.Temperature != nil {
		out.Temperature = *req.Temperature
	}
	if len(req.Tools) > 0 {
		out.Tools = make([]openai.Tool, len(req.Tools))
		for i, d := range req.Tools {
			out.Tools[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: d.Name, Description: d.Description, Parameters: d.Parameters, Strict: d.Strict,
			}}
		}
		out.ToolChoice = "auto"
	}
	out.ResponseFormat = chatFormat(req.Format)
	return out
}

func chatMessage(m Message) openai.ChatCompletionMessage {
	out := openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content, ReasoningContent: m.Reasoning, ToolCallID: m.ToolCallID, Name: m.Name}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]openai.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			out.ToolCalls[i] = openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}}
		}
	}
	return out
}

func fromChatMessage(m openai.ChatCompletionMessage) Message {
	out := Message{Role: RoleAssistant, Content: m.Content, Reasoning: m.ReasoningContent}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolRequest{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	if len(out.ToolCalls) == 0 && m.FunctionCall != nil {
		// The legacy functions API: one tool call.
		out.ToolCalls = []ToolRequest{{Name: m.FunctionCall.Name, Arguments: m.FunctionCall.Arguments}}
	}
	return out
}

func fromChatUsage(u openai.Usage) Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

func (m *chatModel) once(ctx context.Context, req openai.ChatCompletionRequest) (*Response, error) {
	resp, err := m.client.CreateChatCompletion(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("the model endpoint returned no choices")
	}
	ch := resp.Choices[0]
	return &Response{ID: resp.ID, Model: resp.Model, Message: fromChatMessage(ch.Message),
		FinishReason: string(ch.FinishReason), Usage: fromChatUsage(resp.Usage)}, nil
}

// streamChunk is a stream chunk plus the error some servers put inside a
// 200 stream.
type streamChunk struct {
	openai.ChatCompletionStreamResponse
	Error *openai.APIError `json:"error,omitempty"`
}

func (m *chatModel) stream(ctx context.Context, req openai.ChatCompletionRequest, onDelta func(Delta), hint *retryHint) (*Response, error) {
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	stream, err := m.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	resp := &Response{Message: Message{Role: RoleAssistant}}
	var content, reasoning strings.Builder
	var asm toolCallAssembler
	for {
		raw, err := stream.RecvRaw()
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
		var chunk streamChunk
		if err := json.Unmarshal(raw, &chunk); err != nil {
			return nil, fmt.Errorf("the model endpoint sent a chunk that is not JSON: %w", err)
		}
		if chunk.Error != nil {
			return nil, fmt.Errorf("the model endpoint reported an error mid-stream: %w", chunk.Error)
		}
		if chunk.ID != "" {
			resp.ID = chunk.ID
		}
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.Usage != nil {
			resp.Usage = fromChatUsage(*chunk.Usage)
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			if ch.FinishReason != "" {
				resp.FinishReason = string(ch.FinishReason)
			}
			if d.Content != "" || d.ReasoningContent != "" {
				content.WriteString(d.Content)
				reasoning.WriteString(d.ReasoningContent)
				onDelta(Delta{Text: d.Content, Reasoning: d.ReasoningContent})
			}
			for _, tc := range d.ToolCalls {
				asm.add(tc)
			}
			if d.FunctionCall != nil {
				asm.add(openai.ToolCall{Type: openai.ToolTypeFunction, Function: *d.FunctionCall})
			}
		}
	}
	resp.Message.Content = content.String()
	resp.Message.Reasoning = reasoning.String()
	resp.Message.ToolCalls = asm.calls()
	return resp, nil
}

// toolCallAssembler joins streamed tool-call fragments, in time linear in
// their total size. A fragment with an index belongs to the call at that
// index; servers that omit the index (Ollama, Gemini's compatibility
// endpoint) start a new call with each new non-empty ID and extend the
// last call otherwise.
type toolCallAssembler struct {
	parts []callParts
	index map[int]int // fragment index → position in parts
}

// callParts is one call being assembled.
type callParts struct {
	id, name string
	args     strings.Builder
}

func (t *toolCallAssembler) add(f openai.ToolCall) {
	pos := -1
	switch {
	case f.Index != nil:
		if t.index == nil {
			t.index = map[int]int{}
		}
		p, ok := t.index[*f.Index]
		// Some servers send index 0 for every call: a new ID means a new call.
		if ok && (f.ID == "" || f.ID == t.parts[p].id) {
			pos = p
		} else {
			t.index[*f.Index] = len(t.parts)
		}
	case len(t.parts) > 0 && (f.ID == "" || f.ID == t.parts[len(t.parts)-1].id):
		pos = len(t.parts) - 1
	}
	if pos < 0 {
		t.parts = append(t.parts, callParts{id: f.ID, name: f.Function.Name})
		t.parts[len(t.parts)-1].args.WriteString(f.Function.Arguments)
		return
	}
	c := &t.parts[pos]
	if c.id == "" {
		c.id = f.ID
	}
	if f.Function.Name != "" && c.name != f.Function.Name {
		c.name += f.Function.Name
	}
	c.args.WriteString(f.Function.Arguments)
}

func (t *toolCallAssembler) calls() []ToolRequest {
	if len(t.parts) == 0 {
		return nil
	}
	out := make([]ToolRequest, len(t.parts))
	for i := range t.parts {
		p := &t.parts[i]
		out[i] = ToolRequest{ID: p.id, Name: p.name, Arguments: p.args.String()}
	}
	return out
}

// recordingClient returns a client like c whose HTTP requests go through
// a retryAfterRecorder, so that a client given with WithClient has its
// Retry-After and mid-stream errors read too. go-openai keeps a client's
// configuration unexported and offers no way to wrap its HTTP client
// afterwards, so the configuration is copied (see clientConfig); should a
// later go-openai lay its Client out differently, c is used as it is.
func recordingClient(c *openai.Client) *openai.Client {
	cfg, ok := clientConfig(c)
	if !ok {
		return c
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	cfg.HTTPClient = retryAfterRecorder{inner: cfg.HTTPClient}
	return openai.NewClientWithConfig(cfg)
}

// modelError describes err, the failure of a request to api, for the
// agent's retries; an error the server answered names the API and the URL,
// with a hint for a 404.
func modelError(err error, h *retryHint, api string) error {
	me := &ModelError{Err: err, RetryAfter: h.after, Retryable: loop.NetworkRetryable(err)}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		me.StatusCode = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		me.StatusCode = reqErr.HTTPStatusCode
	}
	if me.StatusCode != 0 {
		me.Retryable = loop.RetryableStatus(me.StatusCode)
		if h.url != "" {
			me.Err = fmt.Errorf("%s at %s: %w%s", api, h.url, err, notFoundHint(me.StatusCode, h.url, api))
		}
	}
	return me
}

// notFoundHint says what a 404 from the model endpoint at url most likely
// means, or "" for another status.
func notFoundHint(status int, url, api string) string {
	switch {
	case status != http.StatusNotFound:
		return ""
	case !strings.Contains(url, "/v1/"):
		return " (the base URL has no /v1: OpenAI-compatible servers answer under it, as in http://localhost:11434/v1; set OPENAI_BASE_URL or onion.BaseURL with it)"
	case api == "the Responses API":
		return " (the server may not serve the Responses API: use Chat Completions, without onion.ResponsesAPI or -responses)"
	}
	return " (check the base URL and the model's name)"
}

// retryAfterRecorder is the HTTP client of the built-in wire: it sends
// the body Generate wrote in place of go-openai's, and records the
// Retry-After of a failed response where Generate can read it, since
// go-openai's errors do not carry headers.
type retryAfterRecorder struct{ inner openai.HTTPDoer }

type retryAfterKey struct{}

// retryHint carries the body Generate wrote to the HTTP layer, and what
// the HTTP layer saw back to Generate: the
// Retry-After of a failed response, and the tail of a stream, where an
// error event that go-openai cannot decode may be read.
type retryHint struct {
	body  net.Buffers // the request's body, nil to send go-openai's
	url   string      // where it went, without its query
	after time.Duration
	tail  *tailBuffer
}

// tailBuffer keeps the last bytes read through it.
type tailBuffer struct {
	io.ReadCloser
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.mu.Lock()
	t.buf = append(t.buf, p[:n]...)
	if len(t.buf) > 8<<10 {
		t.buf = t.buf[len(t.buf)-8<<10:]
	}
	t.mu.Unlock()
	return n, err
}

// streamError finds the last error event in the stream's tail.
func (h *retryHint) streamError() error {
	if h.tail == nil {
		return nil
	}
	h.tail.mu.Lock()
	defer h.tail.mu.Unlock()
	lines := strings.Split(string(h.tail.buf), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		data, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "data:")
		if !ok || !strings.Contains(data, `"error"`) {
			continue
		}
		var e openai.ErrorResponse
		if json.Unmarshal([]byte(strings.TrimSpace(data)), &e) == nil && e.Error != nil {
			return e.Error
		}
	}
	return nil
}

func withRetryAfter(ctx context.Context) (context.Context, *retryHint) {
	h := &retryHint{}
	return context.WithValue(ctx, retryAfterKey{}, h), h
}

func (r retryAfterRecorder) Do(req *http.Request) (*http.Response, error) {
	h, ok := req.Context().Value(retryAfterKey{}).(*retryHint)
	if ok && h.body != nil {
		swapBody(req, h.body)
	}
	if ok {
		h.url = req.URL.Scheme + "://" + req.URL.Host + req.URL.Path
	}
	resp, err := r.inner.Do(req)
	if err != nil || !ok {
		return resp, err
	}
	if resp.StatusCode >= 400 {
		h.after = loop.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	} else if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		h.tail = &tailBuffer{ReadCloser: resp.Body}
		resp.Body = h.tail
	}
	return resp, err
}
