package anthropic_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// generate sends one request to m, streamed or not, and returns its error
// as a *loop.ModelError.
func generate(t *testing.T, m *anthropic.Model, stream bool) (*loop.Response, *loop.ModelError, string) {
	t.Helper()
	var onDelta func(loop.Delta)
	var text strings.Builder
	if stream {
		onDelta = func(d loop.Delta) { text.WriteString(d.Text) }
	}
	resp, err := m.Generate(context.Background(), &loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "hi"}}}, onDelta)
	if err == nil {
		return resp, nil, text.String()
	}
	var me *loop.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("the error %v (%T) is no *loop.ModelError", err, err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("the error shows the key: %v", err)
	}
	return nil, me, text.String()
}

const (
	start  = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
	text   = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"
	failed = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
)

// TestStreamErrorEvent: an error event before any text is retryable,
// with the status Anthropic gives its type; after text it is not, since a
// new request would say the text again.
func TestStreamErrorEvent(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.Replay("text/event-stream", []byte(start+failed)),
		oniontest.Replay("text/event-stream", []byte(start+text+failed)))
	m := newModel(t, s)
	_, me, _ := generate(t, m, true)
	if me == nil || !me.Retryable || me.StatusCode != 529 || !strings.Contains(me.Error(), "(overloaded_error): Overloaded") ||
		!strings.Contains(me.Error(), s.AnthropicURL()+"/v1/messages") {
		t.Errorf("before text: %+v", me)
	}
	_, me, said := generate(t, m, true)
	if me == nil || me.Retryable || said != "Hel" {
		t.Errorf("after %q: %+v", said, me)
	}
}

// TestStreamCut: a stream that breaks off is retryable until text went
// out; one that ends without message_stop is an unexpected EOF.
func TestStreamCut(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.Text("one two three").CutAfter(2),
		oniontest.Text("one two three").CutAfter(4),
		oniontest.Replay("text/event-stream", []byte(start+text)))
	m := newModel(t, s)
	if _, me, _ := generate(t, m, true); me == nil || !me.Retryable {
		t.Errorf("cut before text: %+v", me)
	}
	if _, me, said := generate(t, m, true); me == nil || me.Retryable || said == "" {
		t.Errorf("cut after %q: %+v", said, me)
	}
	if _, me, _ := generate(t, m, true); me == nil || !errors.Is(me, io.ErrUnexpectedEOF) || !strings.Contains(me.Error(), "message_stop") {
		t.Errorf("no message_stop: %+v", me)
	}
}

// TestStatusErrors: the status says whether to send again; retry-after
// and retry-after-ms say when; an error body is cut, not refused; the
// SDK's error stays reachable.
func TestStatusErrors(t *testing.T) {
	type reply struct {
		status int
		header http.Header
		body   string
	}
	for _, tc := range []struct {
		reply
		retry bool
		after time.Duration
		says  string
	}{
		{reply{429, http.Header{"Retry-After": {"7"}}, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`}, true, 7 * time.Second, "429 Too Many Requests (rate_limit_error): slow down"},
		{reply{529, http.Header{"Retry-After-Ms": {"1500"}}, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, true, 1500 * time.Millisecond, "try again later"},
		{reply{503, nil, strings.Repeat("<html>busy</html>", 200000)}, true, 0, "503 Service Unavailable"},
		{reply{400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: text content blocks must be non-empty"}}`}, false, 0, "text content blocks must be non-empty"},
		{reply{403, nil, `{"type":"error","error":{"type":"permission_error","message":"no"}}`}, false, 0, "may not use this model"},
		{reply{404, nil, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`}, false, 0, "check the model's name and the base URL"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tc.header {
				w.Header()[k] = v
			}
			w.WriteHeader(tc.status)
			io.WriteString(w, tc.body)
		}))
		m, err := anthropic.New("claude-x", anthropic.BaseURL(srv.URL), anthropic.APIKey(testKey))
		if err != nil {
			t.Fatal(err)
		}
		_, me, _ := generate(t, m, false)
		var apiErr *sdk.Error
		if me == nil || me.StatusCode != tc.status || me.Retryable != tc.retry || me.RetryAfter != tc.after ||
			!strings.Contains(me.Error(), tc.says) || !errors.As(me, &apiErr) || len(me.Error()) > 2000 {
			t.Errorf("%d: %+v (%.300s)", tc.status, me, me)
		}
		srv.Close()
	}
}

// TestNoKeyWithBaseURL: a local server needs no key, and none is sent.
func TestNoKeyWithBaseURL(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	s := oniontest.NewServer(t, oniontest.Text("hi"))
	m, err := anthropic.New("local", anthropic.BaseURL(s.AnthropicURL()))
	if err != nil {
		t.Fatal(err)
	}
	if resp, me, _ := generate(t, m, false); me != nil || resp.Message.Content != "hi" {
		t.Fatalf("%+v, %v", resp, me)
	}
	if h := s.Requests()[0].Header; h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("credentials sent: %v", h)
	}
}

// TestWithClient: a client of the program's is used as it is, with its
// own credentials, and without the SDK's retries.
func TestWithClient(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Overloaded(), oniontest.Text("hi"))
	c := sdk.NewClient(anthropicOptions(s)...)
	m, err := anthropic.New("claude-x", anthropic.WithClient(&c))
	if err != nil {
		t.Fatal(err)
	}
	if _, me, _ := generate(t, m, false); me == nil || me.StatusCode != 529 || !me.Retryable {
		t.Fatalf("the 529 was retried by the SDK, or not reported: %+v", me)
	}
	if resp, me, _ := generate(t, m, true); me != nil || resp.Message.Content != "hi" {
		t.Fatalf("%+v, %v", resp, me)
	}
	if got := s.Requests()[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("authorization %q", got)
	}
}

// anthropicOptions configure an SDK client of s, with the key as a bearer
// token (the SDK's own way).
func anthropicOptions(s *oniontest.Server) []option.RequestOption {
	return []option.RequestOption{option.WithBaseURL(s.AnthropicURL()), option.WithAPIKey(testKey)}
}

// TestAuthToken: without a key, ANTHROPIC_AUTH_TOKEN goes as a bearer
// token; a key wins over it.
func TestAuthToken(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("a"), oniontest.Text("b"))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicURL())
	t.Setenv("ANTHROPIC_AUTH_TOKEN", testKey)
	m, err := anthropic.New("claude-x")
	if err != nil {
		t.Fatal(err)
	}
	generate(t, m, false)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-other-0123456789")
	if m, err = anthropic.New("claude-x"); err != nil {
		t.Fatal(err)
	}
	generate(t, m, false)
	first, second := s.Requests()[0].Header, s.Requests()[1].Header
	if first.Get("Authorization") != "Bearer "+testKey || first.Get("X-Api-Key") != "" ||
		second.Get("X-Api-Key") != "sk-ant-other-0123456789" || second.Get("Authorization") != "" {
		t.Errorf("headers %v, then %v", first, second)
	}
}
