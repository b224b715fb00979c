package oniontest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

// The Anthropic wire is spoken with plain HTTP here: oniontest's tests,
// like oniontest, do not compile Anthropic's SDK (package anthropic's
// tests drive it with the SDK).

// anthropicKey is an API key as Anthropic's look.
const anthropicKey = "sk-ant-api03-Zq3xV9mT2bLw8RfK4nYp6HcJ1dGs5AeU"

// postMessages sends body to the server's Messages API.
func postMessages(t *testing.T, base, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", anthropicKey)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

const hello = `{"model":"claude-x","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`

func TestAnthropicReplies(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.Text("Hello there").WithUsage(100, 7).WithCache(60, 30),
		oniontest.ToolCalls(oniontest.ToolCall{ID: "toolu_1", Name: "get", Arguments: `{"a":1}`}).WithThinking("Hmm."),
		oniontest.Text("cut").Truncated(),
	)
	resp, body := postMessages(t, s.AnthropicURL(), hello)
	want := `{"model":"claude-x","id":"msg_oniontest_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hello there"}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"stop_details":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":30,` +
		`"cache_read_input_tokens":60,"cache_creation":{"ephemeral_5m_input_tokens":30,"ephemeral_1h_input_tokens":0},"output_tokens":7,` +
		`"service_tier":"standard","inference_geo":"not_available"}}`
	if resp.StatusCode != 200 || string(body) != want {
		t.Errorf("reply %d:\n got %s\nwant %s", resp.StatusCode, body, want)
	}

	resp, body = postMessages(t, s.AnthropicURL(), strings.Replace(hello, `"max_tokens":100`, `"max_tokens":100,"stream":true`, 1))
	var types []string
	var args, thinking, signature string
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type  string            `json:"type"`
			Delta map[string]string `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		types = append(types, ev.Type)
		args += ev.Delta["partial_json"]
		thinking += ev.Delta["thinking"]
		signature += ev.Delta["signature"]
	}
	if resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" || args != `{"a":1}` || thinking != "Hmm." ||
		signature != oniontest.ThinkingSignature("Hmm.") {
		t.Errorf("stream: args %q, thinking %q, signature %q", args, thinking, signature)
	}
	order := strings.Join(types, " ")
	if !strings.HasPrefix(order, "message_start content_block_start ping content_block_delta") ||
		!strings.HasSuffix(order, "content_block_stop message_delta message_stop") || !strings.Contains(order, `content_block_stop content_block_start content_block_delta`) {
		t.Errorf("events %s", order)
	}
	if !strings.Contains(string(body), `"stop_reason":"tool_use"`) {
		t.Errorf("no stop reason tool_use: %s", body)
	}

	_, body = postMessages(t, s.AnthropicURL(), hello)
	if !strings.Contains(string(body), `"stop_reason":"max_tokens"`) {
		t.Errorf("truncated: %s", body)
	}
	r := s.Requests()[1]
	if r.Anthropic == nil || !r.Stream || r.Anthropic.MaxTokens != 100 || r.Body.Messages[0].Content != "hi" {
		t.Errorf("request %+v", r.Anthropic)
	}
}

func TestAnthropicErrors(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Overloaded(), oniontest.StreamError("api_error", "boom"), oniontest.StreamError("overloaded_error", "busy"))
	resp, body := postMessages(t, s.AnthropicURL(), hello)
	if resp.StatusCode != 529 || !strings.Contains(string(body), `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}`) {
		t.Errorf("overloaded: %d %s", resp.StatusCode, body)
	}
	resp, body = postMessages(t, s.AnthropicURL(), hello)
	if resp.StatusCode != 500 || !strings.Contains(string(body), `"api_error"`) {
		t.Errorf("api_error: %d %s", resp.StatusCode, body)
	}
	resp, body = postMessages(t, s.AnthropicURL(), strings.Replace(hello, `"max_tokens":100`, `"max_tokens":100,"stream":true`, 1))
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "event: message_start") ||
		!strings.HasSuffix(string(body), "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n") {
		t.Errorf("error event: %d %s", resp.StatusCode, body)
	}
	// No step left: an error in the API's shape, and the test fails (here
	// a test of its own, so that this one does not).
	t.Run("no step left", func(t *testing.T) {
		ft := &fakeT{TB: t}
		s := oniontest.NewServer(ft)
		resp, body := postMessages(t, s.AnthropicURL(), hello)
		if resp.StatusCode != 500 || !strings.Contains(string(body), `"type":"error","error":{"type":"api_error"`) || ft.failures() == "" {
			t.Errorf("%d %s", resp.StatusCode, body)
		}
	})
}

// TestAnthropicRefusals: the requests api.anthropic.com refuses get its
// 400, in its words, and use up no step.
func TestAnthropicRefusals(t *testing.T) {
	call := `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get","input":{}}]}`
	for _, tc := range []struct{ body, says string }{
		{`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens: Field required"},
		{`{"model":"m","max_tokens":5,"messages":[]}`, "at least one message"},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "text content blocks must be non-empty"},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},` + call + `,{"role":"user","content":"next"}]}`,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}]}`,
			"messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9."},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"call:1","name":"get","input":{}}]}]}`,
			"messages.1.content.0.tool_use.id: String should match pattern"},
		{`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[` +
			strings.Repeat(`{"role":"user","content":[{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}]},`, 4) + `{"role":"user","content":"q"}]}`,
			"A maximum of 4 blocks with cache_control may be provided. Found 5."},
	} {
		s := oniontest.NewServer(t, oniontest.Text("never"))
		resp, body := postMessages(t, s.AnthropicURL(), tc.body)
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"invalid_request_error"`) || !strings.Contains(string(body), tc.says) {
			t.Errorf("%.80s: %d %s", tc.body, resp.StatusCode, body)
		}
	}
	// Results in the message after the calls, a note joined to them: taken.
	s := oniontest.NewServer(t, oniontest.Text("ok"))
	body := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"},` + call +
		`,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"}]},{"role":"user","content":"note"}]}`
	if resp, b := postMessages(t, s.AnthropicURL(), body); resp.StatusCode != 200 {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	if got := s.Requests()[0].ToolResults(); len(got) != 1 || got[0].Content != "r" || got[0].Name != "get" {
		t.Errorf("tool results %+v", got)
	}
}

// TestAnthropicRecord: a run recorded from an Anthropic endpoint keeps no
// key (x-api-key), keeps the rate-limit headers, and plays back.
func TestAnthropicRecord(t *testing.T) {
	upstream := oniontest.NewServer(t, oniontest.Text("recorded answer"))
	file := filepath.Join(t.TempDir(), "run.json")
	rec := oniontest.Record(t, upstream.AnthropicURL()+"/v1", file)
	if _, body := postMessages(t, rec.AnthropicURL(), hello); !strings.Contains(string(body), "recorded answer") {
		t.Fatalf("through the recorder: %s", body)
	}
	if got := upstream.Requests()[0].Header.Get("X-Api-Key"); got != anthropicKey {
		t.Errorf("the key did not go upstream: %q", got)
	}
	rec.Close()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), anthropicKey[:20]) || !strings.Contains(string(data), `"path": "/v1/messages"`) {
		t.Errorf("the recording: %s", data)
	}
	play := oniontest.Playback(t, file)
	if _, body := postMessages(t, play.AnthropicURL(), hello); !strings.Contains(string(body), "recorded answer") {
		t.Errorf("played back: %s", body)
	}
}
