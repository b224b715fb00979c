package oniontest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/oniontest"
)

// geminiKey is an API key as Google's look.
const geminiKey = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"

// postGemini sends body to path of base, as genai does, and returns the reply.
func postGemini(t *testing.T, base, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Goog-Api-Key", geminiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

const (
	generate    = "/v1beta/models/gemini-2.5-flash:generateContent"
	streamed    = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	geminiHello = `{"contents":[{"parts":[{"text":"Hi"}],"role":"user"}]}`
)

func TestGeminiText(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Hello there.").WithUsage(9, 3), oniontest.Text("Hello there."))
	status, h, body := postGemini(t, s.GeminiURL(), generate, geminiHello)
	want := `{
  "candidates": [
    {
      "content": {
        "parts": [
          {
            "text": "Hello there."
          }
        ],
        "role": "model"
      },
      "finishReason": "STOP",
      "index": 0
    }
  ],
  "usageMetadata": {
    "promptTokenCount": 9,
    "candidatesTokenCount": 3,
    "totalTokenCount": 12
  },
  "modelVersion": "gemini-2.5-flash",
  "responseId": "oniontest_1"
}
`
	if status != 200 || body != want || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Errorf("%d %s", status, body)
	}
	status, h, body = postGemini(t, s.GeminiURL(), streamed, geminiHello)
	events := strings.Split(strings.TrimSuffix(body, "\r\n\r\n"), "\r\n\r\n")
	if status != 200 || h.Get("Content-Type") != "text/event-stream" || len(events) != 2 ||
		!strings.HasPrefix(events[0], `data: {"candidates":[{"content":{"parts":[{"text":"Hello"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":10,"totalTokenCount":10}`) ||
		!strings.Contains(events[1], `"parts":[{"text":" there."}],"role":"model"},"finishReason":"STOP"`) ||
		!strings.Contains(events[1], `"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}`) {
		t.Errorf("%d %q", status, body)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Gemini == nil || reqs[0].Gemini.Model != "gemini-2.5-flash" || reqs[0].Stream || !reqs[1].Stream ||
		len(reqs[0].Body.Messages) != 1 || reqs[0].Body.Messages[0].Content != "Hi" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestGeminiToolCalls(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`), oniontest.ToolCall{ID: "c2", Name: "get_time", Arguments: `{}`}),
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`), oniontest.Call("get_time", `{}`)),
		oniontest.ToolCalls(oniontest.Call("broken", `{"city":`)),
	)
	_, _, body := postGemini(t, s.GeminiURL(), generate, geminiHello)
	var r struct {
		Candidates []struct {
			Content struct {
				Parts []json.RawMessage `json:"parts"`
			} `json:"content"`
			FinishReason  string `json:"finishReason"`
			FinishMessage string `json:"finishMessage"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	p := r.Candidates[0].Content.Parts
	for i := range p {
		var b bytes.Buffer
		_ = json.Compact(&b, p[i])
		p[i] = b.Bytes()
	}
	if len(p) != 2 || !strings.HasPrefix(string(p[0]), `{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"`) ||
		string(p[1]) != `{"functionCall":{"name":"get_time","args":{},"id":"c2"}}` || r.Candidates[0].FinishReason != "STOP" {
		t.Errorf("parts %s", p)
	}
	// Streamed, the calls come whole in one event, and the finish
	// reason after them.
	_, _, body = postGemini(t, s.GeminiURL(), streamed, geminiHello)
	events := strings.Split(strings.TrimSuffix(body, "\r\n\r\n"), "\r\n\r\n")
	if len(events) != 2 || strings.Count(events[0], `"functionCall"`) != 2 || !strings.Contains(events[1], `"parts":[{"text":""}]`) ||
		!strings.Contains(events[1], `"finishReason":"STOP"`) {
		t.Errorf("events %q", events)
	}
	_, _, body = postGemini(t, s.GeminiURL(), generate, geminiHello)
	if !strings.Contains(body, `"finishReason": "MALFORMED_FUNCTION_CALL"`) || strings.Contains(body, `"content"`) {
		t.Errorf("malformed arguments: %s", body)
	}
}

func TestGeminiModifiers(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.Text("The capital of").Truncated(),
		oniontest.RateLimited(3*time.Second),
		oniontest.StreamError("UNAVAILABLE", "The model is overloaded."),
		oniontest.StreamError("UNAVAILABLE", "The model is overloaded."),
		oniontest.Text("thinking"),
	)
	_, _, body := postGemini(t, s.GeminiURL(), generate, geminiHello)
	if !strings.Contains(body, `"finishReason": "MAX_TOKENS"`) {
		t.Errorf("truncated: %s", body)
	}
	status, h, body := postGemini(t, s.GeminiURL(), generate, geminiHello)
	want := `{
  "error": {
    "code": 429,
    "message": "Resource has been exhausted (oniontest). Please retry in 3s.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "3s"
      }
    ]
  }
}
`
	if status != 429 || h.Get("Retry-After") != "3" || body != want {
		t.Errorf("rate limited: %d %s %s", status, h, body)
	}
	status, _, body = postGemini(t, s.GeminiURL(), generate, geminiHello)
	if status != 503 || !strings.Contains(body, `"status": "UNAVAILABLE"`) {
		t.Errorf("stream error, not streamed: %d %s", status, body)
	}
	status, _, body = postGemini(t, s.GeminiURL(), streamed, geminiHello)
	if status != 200 || !strings.HasSuffix(body, `data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`+"\r\n\r\n") {
		t.Errorf("stream error: %d %q", status, body)
	}
	// Thoughts come when the request asks for them.
	_, _, body = postGemini(t, s.GeminiURL(), generate, `{"contents":[{"parts":[{"text":"Hi"}],"role":"user"}],"generationConfig":{"thinkingConfig":{"includeThoughts":true}}}`)
	if !strings.Contains(body, `"thought": true`) {
		t.Errorf("thoughts: %s", body)
	}
}

func TestGeminiRefusals(t *testing.T) {
	call := `{"parts":[{"functionCall":{"name":"a","args":{}},"thoughtSignature":"c2ln"},{"functionCall":{"name":"b","args":{}}}],"role":"model"}`
	tests := []struct {
		name, path, body, want string
	}{
		{"no contents", generate, `{}`, "contents is not specified"},
		{"a response missing", generate, `{"contents":[{"parts":[{"text":"Hi"}],"role":"user"},` + call +
			`,{"parts":[{"functionResponse":{"name":"a","response":{}}}],"role":"user"}]}`, "number of function response parts"},
		{"out of order", generate, `{"contents":[{"parts":[{"text":"Hi"}],"role":"user"},` + call +
			`,{"parts":[{"functionResponse":{"name":"b","response":{}}},{"functionResponse":{"name":"a","response":{}}}],"role":"user"}]}`, `named \"b\" where its function call is named \"a\"`},
		{"no signature on Gemini 3", "/v1beta/models/gemini-3-pro-preview:generateContent",
			`{"contents":[{"parts":[{"text":"Hi"}],"role":"user"},{"parts":[{"functionCall":{"name":"a","args":{}}}],"role":"model"},` +
				`{"parts":[{"functionResponse":{"name":"a","response":{}}}],"role":"user"}]}`, "missing a thought_signature"},
		{"a wrong id", "/v1beta/models/gemini-3-pro-preview:generateContent",
			`{"contents":[{"parts":[{"text":"Hi"}],"role":"user"},{"parts":[{"functionCall":{"id":"x1","name":"a","args":{}},"thoughtSignature":"c2ln"}],"role":"model"},` +
				`{"parts":[{"functionResponse":{"id":"x2","name":"a","response":{}}}],"role":"user"}]}`, `has id \"x2\"`},
	}
	s := oniontest.NewServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := postGemini(t, s.GeminiURL(), tt.path, tt.body)
			if status != 400 || !strings.Contains(body, `"status": "INVALID_ARGUMENT"`) || !strings.Contains(body, tt.want) {
				t.Errorf("%d %s", status, body)
			}
		})
	}
	// An earlier turn of Gemini 3 needs no signature, and a turn of 2.5
	// none at all.
	s = oniontest.NewServer(t, oniontest.Text("ok"), oniontest.Text("ok"))
	old := `{"contents":[{"parts":[{"text":"Hi"}],"role":"user"},{"parts":[{"functionCall":{"name":"a","args":{}}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"name":"a","response":{}}}],"role":"user"},{"parts":[{"text":"ok"}],"role":"model"},{"parts":[{"text":"again"}],"role":"user"}]}`
	if status, _, body := postGemini(t, s.GeminiURL(), "/v1beta/models/gemini-3-pro-preview:generateContent", old); status != 200 {
		t.Errorf("an earlier turn: %d %s", status, body)
	}
	if status, _, body := postGemini(t, s.GeminiURL(), generate, strings.Replace(old, `,{"parts":[{"text":"ok"}],"role":"model"},{"parts":[{"text":"again"}],"role":"user"}`, "", 1)); status != 200 {
		t.Errorf("Gemini 2.5: %d %s", status, body)
	}
	// Errors of the server itself are in the Gemini API's shape too.
	status, _, body := postGemini(t, s.GeminiURL(), "/v1beta/models/gemini-2.5-flash:countTokens", geminiHello)
	if status != 404 || !strings.Contains(body, `"status": "NOT_FOUND"`) {
		t.Errorf("another method: %d %s", status, body)
	}
}

// TestGeminiImplicitCache: a request that shares 1,024 tokens or more of
// its prompt with an earlier one reports them as cached.
func TestGeminiImplicitCache(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("a").WithUsage(3000, 1), oniontest.Text("b").WithUsage(3000, 1), oniontest.Text("c").WithUsage(100, 1))
	system := `"systemInstruction":{"parts":[{"text":"` + strings.Repeat("rule ", 1000) + `"}]}`
	first := `{` + system + `,"contents":[{"parts":[{"text":"Hi"}],"role":"user"}]}`
	second := `{` + system + `,"contents":[{"parts":[{"text":"Hi"}],"role":"user"},{"parts":[{"text":"a"}],"role":"model"},{"parts":[{"text":"more"}],"role":"user"}]}`
	_, _, body := postGemini(t, s.GeminiURL(), generate, first)
	if strings.Contains(body, "cachedContentTokenCount") {
		t.Errorf("the first request is served from the cache: %s", body)
	}
	_, _, body = postGemini(t, s.GeminiURL(), generate, second)
	// The prefix: the system instruction and the first content, less the
	// array's closing bracket.
	want := (len(`{"parts":[{"text":"`+strings.Repeat("rule ", 1000)+`"}]}`) + len(`[{"parts":[{"text":"Hi"}],"role":"user"}`)) / 4
	if !strings.Contains(body, `"cachedContentTokenCount": `+itoa(want)) {
		t.Errorf("want %d cached: %s", want, body)
	}
	_, _, body = postGemini(t, s.GeminiURL(), generate, second)
	if !strings.Contains(body, `"cachedContentTokenCount": 100`) {
		t.Errorf("the cache serves no more than the prompt: %s", body)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestGeminiRecordPlayback: a Gemini run recorded keeps no key, whether
// the client sent it in the x-goog-api-key header or in the query, and
// plays back.
func TestGeminiRecordPlayback(t *testing.T) {
	upstream := oniontest.NewServer(t, oniontest.Text("echo "+geminiKey), oniontest.Text("two words"))
	file := filepath.Join(t.TempDir(), "gemini.json")
	rec := oniontest.Record(t, upstream.GeminiURL(), file)
	_, _, body := postGemini(t, rec.GeminiURL(), generate+"?key="+geminiKey, geminiHello)
	if !strings.Contains(body, geminiKey) {
		t.Fatalf("the reply did not come through: %s", body)
	}
	postGemini(t, rec.GeminiURL(), streamed, geminiHello)
	rec.Close()
	if got := upstream.Requests(); len(got) != 2 || got[0].Header.Get("X-Goog-Api-Key") != geminiKey {
		t.Fatalf("upstream got %d requests", len(got))
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if f := leakedForm(string(b), geminiKey); f != "" {
		t.Fatalf("the recording holds the key (%q):\n%s", f, b)
	}
	if !bytes.Contains(b, []byte(`"query": "key=[redacted]"`)) || !bytes.Contains(b, []byte(`"path": "/v1beta/models/gemini-2.5-flash:streamGenerateContent"`)) {
		t.Errorf("recording:\n%s", b)
	}
	var rf struct {
		Exchanges []struct {
			Response struct {
				Events []string `json:"events"`
			} `json:"response"`
		} `json:"exchanges"`
	}
	if err := json.Unmarshal(b, &rf); err != nil || len(rf.Exchanges) != 2 || len(rf.Exchanges[1].Response.Events) != 2 {
		t.Errorf("the stream is not kept event by event: %s", b)
	}

	play := oniontest.Playback(t, file)
	_, _, body = postGemini(t, play.GeminiURL(), generate+"?key="+geminiKey, geminiHello)
	if !strings.Contains(body, "echo [redacted]") {
		t.Errorf("played back: %s", body)
	}
	_, _, body = postGemini(t, play.GeminiURL(), streamed, geminiHello)
	if !strings.Contains(body, `" words"`) {
		t.Errorf("played back: %s", body)
	}
}
