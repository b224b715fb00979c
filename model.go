package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"
)

// This file talks to the model endpoint: one request with retries, plain or
// streamed, and the assembly of streamed tool-call fragments.

// reply is one assistant message and the tokens it cost.
type reply struct {
	msg   openai.ChatCompletionMessage
	usage openai.Usage
}

// callModel sends req, retrying rate limits, server and network errors
// with exponential backoff and jitter, honouring Retry-After.
func (a *Agent) callModel(ctx context.Context, req openai.ChatCompletionRequest, emit func(Event)) (reply, error) {
	var lastErr error
	for attempt := 0; ; attempt++ {
		ctx, hint := withRetryAfter(ctx)
		var r reply
		var err error
		spoke := false // text already went out to the caller
		if emit != nil {
			r, err = a.streamOnce(ctx, req, func(e Event) { spoke = true; emit(e) }, hint)
		} else {
			r, err = a.once(ctx, req)
		}
		if err == nil {
			return r, nil
		}
		lastErr = err
		// A stream cut after some of its text was passed on is not sent
		// again: the caller would read that text twice.
		if ctx.Err() != nil || attempt >= a.cfg.retries || !retryable(err) || spoke {
			return reply{}, lastErr
		}
		wait := backoff(a.cfg.backoffMin, a.cfg.backoffMax, attempt)
		if hint.after > 0 {
			wait = hint.after
		}
		a.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "model request failed, retrying", slog.String("error", err.Error()), slog.Duration("wait", wait))
		if err := sleep(ctx, wait); err != nil {
			return reply{}, err
		}
	}
}

func (a *Agent) once(ctx context.Context, req openai.ChatCompletionRequest) (reply, error) {
	resp, err := a.client.CreateChatCompletion(ctx, req)
	if err != nil {
		return reply{}, err
	}
	if len(resp.Choices) == 0 {
		return reply{}, errors.New("the model endpoint returned no choices")
	}
	msg := resp.Choices[0].Message
	if msg.Role == "" {
		msg.Role = openai.ChatMessageRoleAssistant
	}
	if len(msg.ToolCalls) == 0 && msg.FunctionCall != nil {
		// The legacy functions API: treat it as one tool call.
		msg.ToolCalls = []openai.ToolCall{{Type: openai.ToolTypeFunction, Function: *msg.FunctionCall}}
		msg.FunctionCall = nil
	}
	return reply{msg: msg, usage: resp.Usage}, nil
}

// streamChunk is a stream chunk plus the error some servers put inside a
// 200 stream.
type streamChunk struct {
	openai.ChatCompletionStreamResponse
	Error *openai.APIError `json:"error,omitempty"`
}

func (a *Agent) streamOnce(ctx context.Context, req openai.ChatCompletionRequest, emit func(Event), hint *retryHint) (reply, error) {
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	stream, err := a.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return reply{}, err
	}
	defer stream.Close()
	var r reply
	r.msg.Role = openai.ChatMessageRoleAssistant
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
				return reply{}, fmt.Errorf("the model endpoint reported an error mid-stream: %w", se)
			}
			return reply{}, err
		}
		var chunk streamChunk
		if err := json.Unmarshal(raw, &chunk); err != nil {
			return reply{}, fmt.Errorf("the model endpoint sent a chunk that is not JSON: %w", err)
		}
		if chunk.Error != nil {
			return reply{}, fmt.Errorf("the model endpoint reported an error mid-stream: %w", chunk.Error)
		}
		if chunk.Usage != nil {
			r.usage = *chunk.Usage
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			if d.Content != "" {
				content.WriteString(d.Content)
				emit(Event{Kind: EventTextDelta, Text: d.Content})
			}
			reasoning.WriteString(d.ReasoningContent)
			for _, tc := range d.ToolCalls {
				asm.add(tc)
			}
			if d.FunctionCall != nil {
				asm.add(openai.ToolCall{Type: openai.ToolTypeFunction, Function: *d.FunctionCall})
			}
		}
	}
	r.msg.Content = content.String()
	r.msg.ReasoningContent = reasoning.String()
	r.msg.ToolCalls = asm.calls
	return r, nil
}

// toolCallAssembler joins streamed tool-call fragments. A fragment with an
// index belongs to the call at that index; servers that omit the index
// (Ollama, Gemini's compatibility endpoint) start a new call with each new
// non-empty ID and extend the last call otherwise.
type toolCallAssembler struct {
	calls []openai.ToolCall
	index map[int]int // fragment index → position in calls
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
		if ok && (f.ID == "" || f.ID == t.calls[p].ID) {
			pos = p
		} else {
			t.index[*f.Index] = len(t.calls)
		}
	case len(t.calls) > 0 && (f.ID == "" || f.ID == t.calls[len(t.calls)-1].ID):
		pos = len(t.calls) - 1
	}
	if pos < 0 {
		f.Index = nil
		f.Type = openai.ToolTypeFunction
		t.calls = append(t.calls, f)
		return
	}
	c := &t.calls[pos]
	if c.ID == "" {
		c.ID = f.ID
	}
	if f.Function.Name != "" && c.Function.Name != f.Function.Name {
		c.Function.Name += f.Function.Name
	}
	c.Function.Arguments += f.Function.Arguments
}

// retryable reports whether a failed model request may succeed if sent
// again: rate limits, server errors and network errors.
func retryable(err error) bool {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode == http.StatusTooManyRequests || apiErr.HTTPStatusCode >= 500
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		if reqErr.HTTPStatusCode == http.StatusTooManyRequests || reqErr.HTTPStatusCode >= 500 {
			return true
		}
		if reqErr.HTTPStatusCode != 0 {
			return false
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection reset")
}

// backoff is the wait before retry n (from 0): exponential from min, capped
// at max, with full jitter over its upper half.
func backoff(lo, hi time.Duration, n int) time.Duration {
	d := lo << min(n, 20)
	if d > hi || d <= 0 {
		d = hi
	}
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfterRecorder is the agent's HTTP client: it records the
// Retry-After of a failed response where callModel can read it, since
// go-openai's errors do not carry headers.
type retryAfterRecorder struct{ inner openai.HTTPDoer }

type retryAfterKey struct{}

// retryHint carries what the HTTP layer saw back to callModel: the
// Retry-After of a failed response, and the tail of a stream, where an
// error event that go-openai cannot decode may be read.
type retryHint struct {
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
	resp, err := r.inner.Do(req)
	h, ok := req.Context().Value(retryAfterKey{}).(*retryHint)
	if err != nil || !ok {
		return resp, err
	}
	if resp.StatusCode >= 400 {
		h.after = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	} else if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		h.tail = &tailBuffer{ReadCloser: resp.Body}
		resp.Body = h.tail
	}
	return resp, err
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
