package oniontest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Server is a local OpenAI endpoint, Chat Completions and Responses API,
// that answers each request with the next scripted [Step].
type Server struct {
	srv       *httptest.Server
	t         testing.TB    // nil when NewServer was given none
	done      chan struct{} // closed by Close, to end Delay waits
	closeOnce sync.Once

	onClose func() // set by Record: run by Close once the server is down

	mu       sync.Mutex // guards the fields below
	steps    []Step
	next     int // index in steps of the next step to serve
	requests []Request
	received int  // requests received, kept or not (see keep.go)
	keep     int  // how many requests to keep, negative for all
	calls    int  // tool-call IDs assigned so far
	closed   bool // set by Close: the test may be over, so no more t.Errorf

	// geminiPrompts are the prompts of the last Gemini requests, for the
	// implicit cache the Gemini wire reports (gemini_wire.go).
	geminiPrompts [][]byte
}

// Request is one request the server received.
type Request struct {
	Body   openai.ChatCompletionRequest // decoded from Raw; zero if Raw did not parse
	Raw    []byte                       // the body as received
	Header http.Header
	Stream bool // the request asked for a stream ("stream": true)
	// Responses is the decoded body of a /v1/responses request, nil for
	// Chat Completions. Body then holds the same conversation in Chat
	// Completions terms, so that assertions hold on either wire.
	Responses *ResponsesRequest

	// Gemini is the decoded body of a Gemini generateContent request
	// (gemini.go), nil on OpenAI's wires; Body then holds the same
	// conversation in Chat Completions terms.
	Gemini *GeminiRequest
	// Anthropic is the decoded body of a /v1/messages request (Anthropic's
	// Messages API), nil on the other wires. Body then holds the same
	// conversation in Chat Completions terms.
	Anthropic *AnthropicRequest
}

// ToolResults returns the tool messages the request carries, in order: the
// results of tool calls the agent sends back to the model.
func (r Request) ToolResults() []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for _, m := range r.Body.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m)
		}
	}
	return out
}

// NewServer starts a Server that serves steps in order, one per request,
// and closes it when the test ends. A request that finds no step left gets
// a 500 reply and fails the test.
//
// t may be nil, as in an Example: then nothing is registered, problems are
// only reported in the replies, and the caller must call Close.
func NewServer(t testing.TB, steps ...Step) *Server {
	if t != nil {
		t.Helper()
	}
	s := newServer(t)
	s.steps = slices.Clone(steps)
	s.start(http.HandlerFunc(s.serveHTTP))
	return s
}

// newServer is a Server not yet started, keeping every request.
func newServer(t testing.TB) *Server {
	return &Server{t: t, done: make(chan struct{}), keep: -1}
}

// start serves h and, given a test, closes the server when it ends.
func (s *Server) start(h http.Handler) {
	s.srv = httptest.NewServer(h)
	if s.t != nil {
		s.t.Cleanup(s.Close)
	}
}

// URL returns the server's base URL including "/v1", ready for
// openai.ClientConfig.BaseURL.
func (s *Server) URL() string {
	return s.srv.URL + "/v1"
}

// Client returns a go-openai client of the server, with API key "test-key".
func (s *Server) Client() *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = s.URL()
	cfg.HTTPClient = s.srv.Client() // its idle connections are closed by Close
	return openai.NewClientWithConfig(cfg)
}

// Requests returns every request received so far on either endpoint, in
// order, including those that got an error reply, or the last few of them
// after [Server.KeepRequests]. Requests to other paths are not recorded.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.kept())
}

// Add appends steps to the script.
func (s *Server) Add(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, steps...)
}

// Close ends any delayed replies, shuts the server down and waits for its
// handlers to return. It may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
		s.srv.Close()
		if s.onClose != nil {
			s.onClose()
		}
	})
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	_, _, gemini := geminiPath(r.URL.Path)
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/chat/completions" && r.URL.Path != responsesPath && r.URL.Path != anthropicPath && !gemini) {
		msg := fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)
		send(w, wireError(r.URL.Path, http.StatusNotFound, msg, "invalid_request_error"), Step{})
		return
	}
	raw, err := io.ReadAll(r.Body)
	req := Request{Raw: raw, Header: r.Header.Clone()}
	if err == nil {
		err = req.decode(r.URL.Path)
	}

	n, step, ok := s.take(req, err == nil)
	switch {
	case err != nil:
		if rep, ok := refusal(err); ok {
			send(w, rep, Step{})
			return
		}
		if rep, ok := anthropicRefusal(err); ok {
			send(w, rep, Step{})
			return
		}
		msg := fmt.Sprintf("oniontest: the body is not a request for %s: %v", r.URL.Path, err)
		send(w, wireError(r.URL.Path, http.StatusBadRequest, msg, "invalid_request_error"), Step{})
		return
	case !ok:
		msg := fmt.Sprintf("oniontest: unexpected request #%d: no step left", n)
		s.errorf("%s", msg)
		send(w, wireError(r.URL.Path, http.StatusInternalServerError, msg, "server_error"), Step{})
		return
	}
	step = step.resolve(req)
	if step.kind == stepInvalid {
		msg := fmt.Sprintf("oniontest: request #%d: the zero Step; build steps with Text, ToolCalls, Error, Replay or Func", n)
		s.errorf("%s", msg)
		send(w, wireError(r.URL.Path, http.StatusInternalServerError, msg, "server_error"), Step{})
		return
	}
	if !s.wait(r.Context(), step.delay) {
		// The client is gone or the server is closing: drop the connection
		// rather than send a reply nobody scripted.
		panic(http.ErrAbortHandler)
	}
	send(w, s.encode(n, req, step), step)
}

// decode fills the decoded fields of a request to path from its Raw body.
func (r *Request) decode(path string) error {
	if model, stream, ok := geminiPath(path); ok {
		return r.decodeGemini(model, stream)
	}
	var err error
	switch path {
	case responsesPath:
		err = r.decodeResponses()
	case anthropicPath:
		err = r.decodeAnthropic()
	default:
		err = json.Unmarshal(r.Raw, &r.Body)
	}
	r.Stream = r.Body.Stream
	return err
}

// take records req and, if consume, hands out the next step. n is the
// request's 1-based number.
func (s *Server) take(req Request, consume bool) (n int, step Step, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = s.keepRequest(req)
	if consume && s.next < len(s.steps) {
		step, ok = s.steps[s.next], true
		s.next++
	}
	return n, step, ok
}

// errorf fails the test, unless it is over.
func (s *Server) errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t != nil && !s.closed {
		s.t.Errorf(format, args...)
	}
}

// wait sleeps d and reports whether it ran to the end.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// encode builds the reply to request number n.
func (s *Server) encode(n int, req Request, step Step) reply {
	if req.Gemini != nil {
		return s.geminiReply(n, req, step)
	}
	if step.kind == stepRaw {
		return step.raw.reply()
	}
	if step.kind == stepToolCalls {
		step.calls = slices.Clone(step.calls) // the Step may be served again
		s.mu.Lock()
		for i := range step.calls {
			if step.calls[i].ID == "" {
				s.calls++
				step.calls[i].ID = "call_" + strconv.Itoa(s.calls)
			}
		}
		s.mu.Unlock()
	}
	if req.Responses != nil {
		return responsesReply(n, req, step)
	}
	if req.Anthropic != nil {
		return anthropicReply(n, req, step)
	}
	m := meta{id: "chatcmpl-oniontest-" + strconv.Itoa(n), created: time.Now().Unix(), model: req.Body.Model}
	if m.model == "" {
		m.model = "oniontest"
	}
	if step.kind == stepStreamError {
		return streamErrorReply(m, req.Stream, step)
	}
	u := defaultUsage
	if step.usage != nil {
		u = *step.usage
	}
	if req.Stream {
		opts := req.Body.StreamOptions
		return streamReply(m, step, u, opts != nil && opts.IncludeUsage)
	}
	return completionReply(m, step, u)
}

// send writes rep, flushing between pieces, and with step.cut breaks the
// connection part way through.
func send(w http.ResponseWriter, rep reply, step Step) {
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	rc := http.NewResponseController(w)
	pieces := rep.pieces
	switch {
	case step.cut && len(pieces) > 1:
		pieces = pieces[:min(step.cutAfter, len(pieces)-1)]
	case step.cut && len(pieces) == 1:
		// Promise the whole body so the client notices it is cut short.
		w.Header().Set("Content-Length", strconv.Itoa(len(pieces[0])))
		pieces = [][]byte{pieces[0][:len(pieces[0])/2]}
	}
	w.WriteHeader(rep.status)
	for _, p := range pieces {
		if _, err := w.Write(p); err != nil {
			return // the client went away
		}
		if len(rep.pieces) > 1 || step.cut {
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
	if step.cut {
		panic(http.ErrAbortHandler) // net/http closes the connection without a log line
	}
}
