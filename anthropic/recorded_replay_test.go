package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// Each test replays a recording of api.anthropic.com (testdata/recorded):
// the agent is set up as the recording client was, the replies are served
// as they came, and the requests onion sends are compared with those the
// client sent, block by block.

// replay serves the replies of xs in order.
func replay(t *testing.T, xs []exchange) *oniontest.Server {
	t.Helper()
	steps := make([]oniontest.Step, len(xs))
	for i, x := range xs {
		steps[i] = x.step()
	}
	return oniontest.NewServer(t, steps...)
}

// namedModel is a Model of s for the recorded model's name.
func namedModel(t *testing.T, s *oniontest.Server, name string, opts ...anthropic.Option) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New(name, append([]anthropic.Option{anthropic.BaseURL(s.AnthropicURL()), anthropic.APIKey(testKey)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// messages are the messages of a request body, each content a list of
// blocks (a string is one text block), without what onion adds (cache
// breakpoints) or leaves out (is_error false).
func messages(t *testing.T, body any) any {
	t.Helper()
	msgs, _ := sentJSON(t, body, "messages").([]any)
	for _, m := range msgs {
		m := m.(map[string]any)
		if s, ok := m["content"].(string); ok {
			m["content"] = []any{map[string]any{"type": "text", "text": s}}
		}
	}
	return strip(msgs, []string{"cache_control", "is_error"})
}

// TestRecordedText: langchaingo's plain request to claude-3-opus.
func TestRecordedText(t *testing.T) {
	xs := loadRecorded(t, "langchaingo/TestClient_CreateMessage.httprr")
	s := replay(t, xs)
	a := newAgent(t, s, namedModel(t, s, "claude-3-opus-20240229", anthropic.MaxTokens(100)), onion.Temperature(0))
	res, _ := run(t, a, false, "Hello, how are you?")
	want := "Hello! As an AI language model, I don't have feelings, but I'm functioning properly and ready to assist you. How can I help you today?"
	if res.Output != want || res.Usage.PromptTokens != 13 || res.Usage.CompletionTokens != 35 {
		t.Errorf("result %+v", res)
	}
	sent := s.Requests()[0].Raw
	for _, k := range []string{"model", "max_tokens", "temperature"} {
		if got, rec := sentJSON(t, sent, k), sentJSON(t, xs[0].request, k); !same(got, rec) {
			t.Errorf("%s: sent %v, recorded %v", k, got, rec)
		}
	}
	if got, rec := messages(t, sent), messages(t, xs[0].request); !same(got, rec) {
		t.Errorf("messages:\n sent %v\n recorded %v", got, rec)
	}
}

// TestRecordedStream: langchaingo's streamed request, with a ping among
// the deltas.
func TestRecordedStream(t *testing.T) {
	xs := loadRecorded(t, "langchaingo/TestClient_CreateMessageStream.httprr")
	s := replay(t, xs)
	a := newAgent(t, s, namedModel(t, s, "claude-3-opus-20240229", anthropic.MaxTokens(100)), onion.Temperature(0))
	res, streamed := run(t, a, true, "Count from 1 to 5")
	if res.Output != "1\n2\n3\n4\n5" || streamed != res.Output || res.Usage.PromptTokens != 15 || res.Usage.CompletionTokens != 13 {
		t.Errorf("result %+v, streamed %q", res, streamed)
	}
	sent := s.Requests()[0].Raw
	for _, k := range []string{"model", "max_tokens", "stream", "temperature"} {
		if got, rec := sentJSON(t, sent, k), sentJSON(t, xs[0].request, k); !same(got, rec) {
			t.Errorf("%s: sent %v, recorded %v", k, got, rec)
		}
	}
}

// family is what RetrieveEntityInfo knows, as pydantic-ai's test told it.
var family = map[string]string{
	"Alice": "alice is bob's wife", "Bob": "bob is alice's husband",
	"Charlie": "charlie is alice's son", "Daisy": "daisy is bob's daughter and charlie's younger sister",
}

// RetrieveEntityInfo gets the knowledge about the given entity.
//
// name: the entity
//
//onion:intent read
func RetrieveEntityInfo(ctx context.Context, name string) (string, error) { return family[name], nil }

// TestRecordedParallelTools: pydantic-ai's run where claude-haiku-4-5
// calls one tool four times in one reply.
func TestRecordedParallelTools(t *testing.T) {
	xs := loadRecorded(t, "pydantic-ai/test_multiple_parallel_tool_calls.yaml")
	s := replay(t, xs)
	system := xs[0].request["system"].(string)
	a := newAgent(t, s, namedModel(t, s, "claude-haiku-4-5", anthropic.MaxTokens(4096)), RetrieveEntityInfo, onion.SystemPrompt(system))
	res, _ := run(t, a, false, "Alice, Bob, Charlie and Daisy are a family. Who is the youngest?")
	if !strings.Contains(res.Output, "Therefore, Daisy is the youngest in the family.") || len(res.ToolCalls) != 4 {
		t.Fatalf("result %+v", res)
	}
	if want := (onion.Usage{PromptTokens: 423 + 771, CompletionTokens: 202 + 77, TotalTokens: 423 + 771 + 202 + 77, Requests: 2}); res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	for i, r := range s.Requests() {
		if got, rec := messages(t, r.Raw), messages(t, xs[i].request); !same(got, rec) {
			t.Errorf("request %d, messages:\n sent %v\n recorded %v", i, got, rec)
		}
		if got := sentJSON(t, r.Raw, "system.0.text").(string); !strings.HasPrefix(got, system) {
			t.Errorf("request %d: system %q", i, got)
		}
		if got := sentJSON(t, r.Raw, "tools.0.name"); got != "retrieve_entity_info" {
			t.Errorf("request %d: tool %v", i, got)
		}
	}
}

// GetUserCountry gets the user's country.
//
//onion:intent read
func GetUserCountry(ctx context.Context) (string, error) { return "Mexico", nil }

// TestRecordedThinkingWithTool: pydantic-ai's run where claude-sonnet-4
// thinks, says a word and calls a tool; its signed thinking goes back in
// the next request as the API sent it.
func TestRecordedThinkingWithTool(t *testing.T) {
	xs := loadRecorded(t, "pydantic-ai/test_anthropic_tool_with_thinking.yaml")
	s := replay(t, xs)
	m := namedModel(t, s, "claude-sonnet-4-0", anthropic.MaxTokens(4096), anthropic.Thinking(3000))
	res, _ := run(t, newAgent(t, s, m, GetUserCountry), false, "What is the largest city in the user country?")
	if !strings.HasPrefix(res.Output, "Based on the information that you're from Mexico, the largest city in your country is **Mexico City**") {
		t.Fatalf("result %+v", res)
	}
	for i, r := range s.Requests() {
		for _, k := range []string{"model", "max_tokens", "thinking"} {
			if got, rec := sentJSON(t, r.Raw, k), sentJSON(t, xs[i].request, k); !same(got, rec) {
				t.Errorf("request %d, %s: sent %v, recorded %v", i, k, got, rec)
			}
		}
		if got, rec := messages(t, r.Raw), messages(t, xs[i].request); !same(got, rec) {
			t.Errorf("request %d, messages:\n sent %v\n recorded %v", i, got, rec)
		}
	}
	sig := sentJSON(t, xs[1].request, "messages.1.content.0.signature").(string)
	if !strings.Contains(string(s.Requests()[1].Raw), `"signature":"`+sig+`"`) {
		t.Error("the signature did not go back as it came")
	}
}

// TestRecordedThinkingStream: pydantic-ai's stream of thinking deltas, a
// signature_delta and text; the thinking streams as reasoning, and its
// block goes back whole with the signature.
func TestRecordedThinkingStream(t *testing.T) {
	xs := loadRecorded(t, "pydantic-ai/test_anthropic_model_thinking_part_stream.yaml")
	s := replay(t, xs)
	s.Add(oniontest.Text("Good."))
	m := namedModel(t, s, "claude-sonnet-4-0", anthropic.MaxTokens(4096), anthropic.Thinking(1024), anthropic.NoCache())
	req := &loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "How do I cross the street?"}}}
	var reasoning, text strings.Builder
	resp, err := m.Generate(context.Background(), req, func(d loop.Delta) {
		reasoning.WriteString(d.Reasoning)
		text.WriteString(d.Text)
	})
	if err != nil {
		t.Fatal(err)
	}
	thought, answer, sig := sseJoin(t, xs[0].body, "thinking_delta", "thinking"), sseJoin(t, xs[0].body, "text_delta", "text"), sseJoin(t, xs[0].body, "signature_delta", "signature")
	if reasoning.String() != thought || resp.Message.Reasoning != thought || !strings.HasPrefix(thought, "This is a straightforward question about pedestrian safety.") {
		t.Errorf("reasoning %q", reasoning.String())
	}
	if text.String() != answer || resp.Message.Content != answer {
		t.Errorf("text %q", resp.Message.Content)
	}
	if resp.ID != "msg_01ALwQ87pTS7hH1PjSdC9wJD" || resp.FinishReason != "end_turn" || resp.Usage.PromptTokens != 43 || resp.Usage.CompletionTokens != 282 {
		t.Errorf("response %+v", resp)
	}
	var items []map[string]string
	if err := json.Unmarshal(resp.Message.Items, &items); err != nil || resp.Message.ItemsFrom != "anthropic" || len(items) != 2 ||
		items[0]["type"] != "thinking" || items[0]["thinking"] != thought || items[0]["signature"] != sig || items[1]["text"] != resp.Message.Content {
		t.Fatalf("items %s (%s), %v", resp.Message.Items, resp.Message.ItemsFrom, err)
	}
	if got, rec := messages(t, s.Requests()[0].Raw), messages(t, xs[0].request); !same(got, rec) {
		t.Errorf("messages:\n sent %v\n recorded %v", got, rec)
	}

	// The next request sends the blocks back byte for byte.
	req.Messages = append(req.Messages, resp.Message, loop.Message{Role: loop.RoleUser, Content: "Thanks."})
	if _, err := m.Generate(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","content":` + string(resp.Message.Items) + `}`
	if !strings.Contains(string(s.Requests()[1].Raw), want) {
		t.Errorf("the reply's blocks did not go back as they were kept:\n%s", s.Requests()[1].Raw)
	}
}

// sseJoin joins the field of the deltas of type typ in the event stream
// body.
func sseJoin(t *testing.T, body []byte, typ, field string) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Delta map[string]string `json:"delta"`
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Delta["type"] == typ {
			b.WriteString(ev.Delta[field])
		}
	}
	return b.String()
}

// TestRecordedRedactedThinking: pydantic-ai's stream with two
// redacted_thinking blocks, whose data go back untouched.
func TestRecordedRedactedThinking(t *testing.T) {
	xs := loadRecorded(t, "pydantic-ai/test_anthropic_model_thinking_part_redacted_stream.yaml")
	s := replay(t, xs)
	m := namedModel(t, s, "claude-sonnet-4-5-20250929", anthropic.MaxTokens(4096), anthropic.Thinking(1024))
	prompt := sentJSON(t, xs[0].request, "messages.0.content.0.text").(string)
	resp, err := m.Generate(context.Background(), &loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: prompt}}}, func(loop.Delta) {})
	if err != nil {
		t.Fatal(err)
	}
	data := regexp.MustCompile(`"redacted_thinking","data":"([^"]+)"`).FindAllStringSubmatch(string(xs[0].body), -1)
	var items []map[string]string
	if err := json.Unmarshal(resp.Message.Items, &items); err != nil || len(data) != 2 || len(items) != 3 {
		t.Fatalf("items %s, %v", resp.Message.Items, err)
	}
	for i, d := range data {
		if items[i]["type"] != "redacted_thinking" || items[i]["data"] != d[1] {
			t.Errorf("item %d: %v, want the data %.20s…", i, items[i], d[1])
		}
	}
	if items[2]["type"] != "text" || items[2]["text"] != resp.Message.Content || resp.Message.Content == "" || resp.Usage.CompletionTokens != 189 {
		t.Errorf("the answer %q, usage %+v", resp.Message.Content, resp.Usage)
	}
}

// TestRecordedError: pydantic-ai's 400 for an effort the model does not
// take: not retried, in the API's words.
func TestRecordedError(t *testing.T) {
	xs := loadRecorded(t, "pydantic-ai/test_anthropic_explicit_effort_xhigh_unsupported_model_errors.yaml")
	s := replay(t, xs)
	_, err := newAgent(t, s, namedModel(t, s, "claude-opus-4-6"), onion.Retries(3)).Run(context.Background(), "What is 2+2?")
	var me *loop.ModelError
	if !errors.As(err, &me) || me.StatusCode != 400 || me.Retryable || len(s.Requests()) != 1 ||
		!strings.Contains(err.Error(), "This model does not support effort level 'xhigh'. Supported levels: high, low, max, medium.") ||
		!strings.Contains(err.Error(), "invalid_request_error") {
		t.Errorf("error %v after %d requests", err, len(s.Requests()))
	}
}

// Payment is an amount to pay.
type Payment struct {
	Amount float64 `json:"amount"`
}

// TestRecordedStructuredOutput: pydantic-ai's answer held to a schema by
// output_config.format, the structured output Ask uses.
func TestRecordedStructuredOutput(t *testing.T) {
	xs := loadRecorded(t, "pydantic-ai/test_anthropic_native_output_decimal_strict.yaml")
	s := replay(t, xs)
	got, _, err := onion.Ask[Payment](context.Background(), newAgent(t, s, namedModel(t, s, "claude-sonnet-4-5")), "Return exactly this payment amount: 12.34")
	if err != nil || got.Amount != 12.34 {
		t.Fatalf("answer %+v, %v", got, err)
	}
	sent := s.Requests()[0].Raw
	if got, rec := sentJSON(t, sent, "output_config.format.type"), sentJSON(t, xs[0].request, "output_config.format.type"); got != rec {
		t.Errorf("output_config.format.type %v, recorded %v", got, rec)
	}
	for _, k := range []string{"output_config.format.schema.required", "output_config.format.schema.additionalProperties", "output_config.format.schema.type"} {
		if got, rec := sentJSON(t, sent, k), sentJSON(t, xs[0].request, k); !same(got, rec) {
			t.Errorf("%s: sent %v, recorded %v", k, got, rec)
		}
	}
}

// TestRecordedImageURL: pydantic-ai's image by URL, which onion sends as
// the same block.
func TestRecordedImageURL(t *testing.T) {
	xs := loadRecorded(t, "pydantic-ai/test_image_url_input.yaml")
	s := replay(t, xs)
	url := sentJSON(t, xs[0].request, "messages.0.content.1.source.url").(string)
	m := namedModel(t, s, "claude-haiku-4-5", anthropic.MaxTokens(4096))
	resp, err := m.Generate(context.Background(), &loop.Request{Messages: []loop.Message{
		{Role: loop.RoleUser, Content: "What is this vegetable?", Images: []loop.Image{{URL: url}}}}}, nil)
	if err != nil || !strings.HasPrefix(resp.Message.Content, "This is a potato.") || resp.Usage.PromptTokens != 296 {
		t.Fatalf("response %+v, %v", resp, err)
	}
	sent := messages(t, s.Requests()[0].Raw).([]any)[0].(map[string]any)["content"].([]any)
	rec := messages(t, xs[0].request).([]any)[0].(map[string]any)["content"].([]any)
	// Anthropic advises images before text: onion sends them so.
	if len(sent) != 2 || !same(sent[0], rec[1]) || !same(sent[1], rec[0]) {
		t.Errorf("content:\n sent %v\n recorded %v", sent, rec)
	}
}
