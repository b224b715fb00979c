package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genai"

	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		// regexp2 keeps a clock goroutine for about a second after a
		// match with a time limit, then ends it; genai's auth transport
		// imports OpenCensus, whose init starts a worker for good.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"),
			goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// ask sends one request of a user prompt to m.
func ask(m *gemini.Model, stream bool) (*loop.Response, []loop.Delta, error) {
	req := &loop.Request{Messages: []loop.Message{{Role: loop.RoleSystem, Content: "Be brief."}, {Role: loop.RoleUser, Content: "Hi"}}}
	var deltas []loop.Delta
	var onDelta func(loop.Delta)
	if stream {
		onDelta = func(d loop.Delta) { deltas = append(deltas, d) }
	}
	resp, err := m.Generate(context.Background(), req, onDelta)
	return resp, deltas, err
}

func newModel(t *testing.T, url string, opts ...gemini.Option) *gemini.Model {
	t.Helper()
	m, err := gemini.New("gemini-2.5-flash", append([]gemini.Option{gemini.BaseURL(url), gemini.APIKey(testKey)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// modelError asserts err is a *loop.ModelError without the key.
func modelError(t *testing.T, err error) *loop.ModelError {
	t.Helper()
	var me *loop.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T), want a *loop.ModelError", err, err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("the error holds the key: %v", err)
	}
	return me
}

func TestErrors(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.RateLimited(2*time.Second),
		oniontest.Error(503, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`),
		oniontest.ReplayStatus(502, "text/html", []byte("<html>"+strings.Repeat("bad gateway ", 1000)+"</html>")),
		oniontest.Error(403, `{"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}`),
		oniontest.Text("cut short").CutAfter(1),
		oniontest.Replay("application/json", []byte(`{"promptFeedback":{"blockReason":"SAFETY","blockReasonMessage":"unsafe"},"usageMetadata":{"promptTokenCount":3}}`)),
	)
	m := newModel(t, s.GeminiURL())
	url := s.GeminiURL() + "/v1beta/models/gemini-2.5-flash:generateContent"
	tests := []struct {
		name      string
		stream    bool
		status    int
		retryable bool
		after     time.Duration
		msg       string
	}{
		{"rate limited", false, 429, true, 2 * time.Second, "gemini: POST " + url + ": 429 RESOURCE_EXHAUSTED: Resource has been exhausted (oniontest). Please retry in 2s."},
		{"overloaded", false, 503, true, 0, "gemini: POST " + url + ": 503 UNAVAILABLE: The model is overloaded. Please try again later."},
		{"not JSON", false, 502, true, 0, "gemini: POST " + url + ": 502: <html>bad gateway"},
		{"denied", false, 403, false, 0, "gemini: POST " + url + ": 403 PERMISSION_DENIED: Method doesn't allow unregistered callers."},
		{"cut", true, 0, true, 0, "gemini: POST " + strings.TrimSuffix(url, ":generateContent") + ":streamGenerateContent: "},
		{"blocked", false, 0, false, 0, "gemini: POST " + url + ": the prompt was blocked: SAFETY: unsafe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ask(m, tt.stream)
			me := modelError(t, err)
			if me.StatusCode != tt.status || me.Retryable != tt.retryable || me.RetryAfter != tt.after || !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("got %d %v %v %q", me.StatusCode, me.Retryable, me.RetryAfter, err)
			}
			if len(err.Error()) > 2500 {
				t.Errorf("an error of %d bytes", len(err.Error()))
			}
		})
	}
	var api genai.APIError
	s.Add(oniontest.RateLimited(time.Second))
	if _, _, err := ask(m, false); !errors.As(err, &api) || api.Code != 429 {
		t.Errorf("genai's error is not reachable: %v", err)
	}
}

// TestRetryAfterHeader: without a RetryInfo, the Retry-After header says
// how long to wait.
func TestRetryAfterHeader(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		io.WriteString(w, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`)
	}))
	defer srv.Close()
	_, _, err := ask(newModel(t, srv.URL), false)
	if me := modelError(t, err); me.RetryAfter != 7*time.Second || !me.Retryable {
		t.Errorf("%+v", me)
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A server that writes back the key it got, in every way it can.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprintf(w, `{"error":{"code":400,"message":"API key not valid: %s (query %s)","status":"INVALID_ARGUMENT"}}`, r.Header.Get("X-Goog-Api-Key"), r.URL.RawQuery)
	}))
	defer srv.Close()
	for _, base := range []string{srv.URL, srv.URL + "/?key=" + testKey} {
		_, _, err := ask(newModel(t, base), false)
		if me := modelError(t, err); me.Retryable || !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("%v", err)
		}
	}
	// A client of the program's: its key is scrubbed too.
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: testKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := gemini.New("gemini-2.5-flash", gemini.WithClient(c))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ask(m, false)
	modelError(t, err)
}

func TestNetworkAndCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler) // the connection drops
	}))
	defer srv.Close()
	_, _, err := ask(newModel(t, srv.URL), false)
	if me := modelError(t, err); !me.Retryable || me.StatusCode != 0 {
		t.Errorf("a lost connection: %+v", me)
	}

	s := oniontest.NewServer(t, oniontest.Text("late").Delay(time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = newModel(t, s.GeminiURL()).Generate(ctx, &loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "Hi"}}}, nil)
	if me := modelError(t, err); me.Retryable || !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %+v", me)
	}
}

func TestNoKey(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_BASE_URL", "")
	m, err := gemini.New("gemini-2.5-flash")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ask(m, false); !errors.Is(err, gemini.ErrNoAPIKey) || modelError(t, err).Retryable {
		t.Errorf("%v", err)
	}
	// A base URL without a key: requests carry none.
	s := oniontest.NewServer(t, oniontest.Text("ok"))
	t.Setenv("GEMINI_BASE_URL", s.GeminiURL())
	if m, err = gemini.New("gemini-2.5-flash"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ask(m, false); err != nil {
		t.Fatal(err)
	}
	if h := s.Requests()[0].Header; h.Get("X-Goog-Api-Key") != "" {
		t.Errorf("a key was sent: %q", h.Get("X-Goog-Api-Key"))
	}
	// $GEMINI_API_KEY comes before $GOOGLE_API_KEY.
	t.Setenv("GEMINI_API_KEY", "gemini-key-123")
	t.Setenv("GOOGLE_API_KEY", "google-key-456")
	s.Add(oniontest.Text("ok"))
	if m, err = gemini.New("gemini-2.5-flash"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ask(m, false); err != nil {
		t.Fatal(err)
	}
	if h := s.Requests()[1].Header; h.Get("X-Goog-Api-Key") != "gemini-key-123" {
		t.Errorf("key %q", h.Get("X-Goog-Api-Key"))
	}
	if _, err := gemini.New(" "); err == nil {
		t.Errorf("a model without a name")
	}
}

func TestOptions(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("a"), oniontest.Text("b"))
	var seen int
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		seen++
		return http.DefaultTransport.RoundTrip(r)
	})}
	m := newModel(t, s.GeminiURL(), gemini.HTTPClient(hc), gemini.ThinkingBudget(1024), gemini.IncludeThoughts(), gemini.MaxOutputTokens(100))
	if _, _, err := ask(m, false); err != nil {
		t.Fatal(err)
	}
	if seen != 1 {
		t.Errorf("the HTTP client saw %d requests", seen)
	}
	var body struct {
		GenerationConfig json.RawMessage `json:"generationConfig"`
	}
	_ = json.Unmarshal(s.Requests()[0].Raw, &body)
	if got := string(body.GenerationConfig); got != `{"maxOutputTokens":100,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":1024}}` {
		t.Errorf("generation config %s", got)
	}
	m = newModel(t, s.GeminiURL(), gemini.ThinkingLevel("low"))
	if _, _, err := ask(m, false); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(s.Requests()[1].Raw, &body)
	if got := string(body.GenerationConfig); got != `{"thinkingConfig":{"thinkingLevel":"LOW"}}` {
		t.Errorf("generation config %s", got)
	}
	if m.Name() != "gemini-2.5-flash" {
		t.Errorf("name %q", m.Name())
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestStreamParts: a stream's text and thoughts are handed on as they
// come, and its parts are gathered with each signature on its own part.
func TestStreamParts(t *testing.T) {
	events := []string{
		`{"candidates":[{"content":{"parts":[{"text":"Let me ","thought":true}],"role":"model"}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"think.","thought":true}],"role":"model"}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"The answer"}],"role":"model"}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":" is 4."}],"role":"model"}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"c2lnbmF0dXJl"}],"role":"model"},"finishReason":"STOP"}],` +
			`"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":4,"totalTokenCount":30,"thoughtsTokenCount":16,"cachedContentTokenCount":8},"modelVersion":"gemini-2.5-pro","responseId":"r1"}`,
	}
	var body strings.Builder
	for _, e := range events {
		body.WriteString("data: " + e + "\r\n\r\n")
	}
	s := oniontest.NewServer(t, oniontest.Replay("text/event-stream", []byte(body.String())))
	resp, deltas, err := ask(newModel(t, s.GeminiURL()), true)
	if err != nil {
		t.Fatal(err)
	}
	want := []loop.Delta{{Reasoning: "Let me "}, {Reasoning: "think."}, {Text: "The answer"}, {Text: " is 4."}}
	if fmt.Sprint(deltas) != fmt.Sprint(want) {
		t.Errorf("deltas %q", deltas)
	}
	if resp.Message.Content != "The answer is 4." || resp.Message.Reasoning != "Let me think." || resp.FinishReason != "STOP" ||
		resp.ID != "r1" || resp.Model != "gemini-2.5-pro" {
		t.Errorf("response %+v", resp)
	}
	if u := resp.Usage; u != (loop.Usage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30, CachedTokens: 8, ReasoningTokens: 16}) {
		t.Errorf("usage %+v", u)
	}
	if got := string(resp.Message.Items); resp.Message.ItemsFrom != "gemini" ||
		got != `[{"text":"Let me think.","thought":true},{"text":"The answer is 4."},{"thoughtSignature":"c2lnbmF0dXJl"}]` {
		t.Errorf("items %s from %q", got, resp.Message.ItemsFrom)
	}

	// A stream that ends before its finish reason is no reply.
	s.Add(oniontest.Replay("text/event-stream", []byte("data: "+events[2]+"\r\n\r\n")))
	_, _, err = ask(newModel(t, s.GeminiURL()), true)
	if me := modelError(t, err); !me.Retryable || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("an unfinished stream: %v", err)
	}
	// An error in the stream is the API's error.
	s.Add(oniontest.Replay("text/event-stream", []byte("data: "+events[2]+"\r\n\r\n"+
		`data: {"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}`+"\r\n\r\n")))
	_, _, err = ask(newModel(t, s.GeminiURL()), true)
	if me := modelError(t, err); !me.Retryable || me.StatusCode != 429 || me.RetryAfter != 1500*time.Millisecond {
		t.Errorf("an error in the stream: %+v %v", me, err)
	}
}

// TestMalformedCallIsRetried: a reply that is only a malformed function
// call (finishReason MALFORMED_FUNCTION_CALL) is sent again, streamed or
// not.
func TestMalformedCallIsRetried(t *testing.T) {
	for _, stream := range []bool{false, true} {
		malformed := oniontest.ToolCalls(oniontest.Call("weather", `{"city":`))
		s := oniontest.NewServer(t, malformed, malformed, oniontest.Text("ok"))
		m := newModel(t, s.GeminiURL())
		_, _, err := ask(m, stream)
		if me := modelError(t, err); !me.Retryable || !strings.Contains(err.Error(), "MALFORMED_FUNCTION_CALL") {
			t.Errorf("stream %v: %v", stream, err)
		}
		a := agent(t, m, Weather)
		if out, err := a.Input(context.Background(), "go"); err != nil || out != "ok" || len(s.Requests()) != 3 {
			t.Errorf("stream %v: %q, %v after %d requests", stream, out, err, len(s.Requests()))
		}
	}
}
