package anthropic_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// The conformance cases of issue #26, on Anthropic's wire: each runs an
// agent through package onion against oniontest's Messages API and checks
// what was sent and what the run made of the replies. Each case is a func
// of the server and the agent's options, so that a table across providers
// can run it.

// testKey is the API key the tests send; it must never show in an error.
const testKey = "sk-ant-test-0123456789abcdef"

// newModel returns a Model of s.
func newModel(t *testing.T, s *oniontest.Server, opts ...anthropic.Option) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New("claude-test", append([]anthropic.Option{anthropic.BaseURL(s.AnthropicURL()), anthropic.APIKey(testKey)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newAgent returns an agent of s with items (tools and options).
func newAgent(t *testing.T, s *oniontest.Server, m *anthropic.Model, items ...any) *onion.Agent {
	t.Helper()
	if m == nil {
		m = newModel(t, s)
	}
	items = append([]any{onion.WithModel(m), onion.RetryBackoff(time.Millisecond, 2*time.Millisecond)}, items...)
	a, err := onion.NewAgent("test", items...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// run runs prompt, streamed or not, and returns the result and the text
// streamed.
func run(t *testing.T, a *onion.Agent, stream bool, prompt string) (*onion.Result, string) {
	t.Helper()
	if !stream {
		res, err := a.Run(context.Background(), prompt)
		if err != nil {
			t.Fatal(err)
		}
		return res, ""
	}
	var text strings.Builder
	for ev, err := range a.Stream(context.Background(), prompt) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case onion.EventTextDelta:
			text.WriteString(ev.Text)
		case onion.EventDone:
			return ev.Result, text.String()
		}
	}
	t.Fatal("the stream ended without EventDone")
	return nil, ""
}

// Weather tells the weather in a city.
//
// city: the city
//
//onion:intent read
func Weather(ctx context.Context, city string) (string, error) {
	return "sunny in " + city, nil
}

var modes = []struct {
	name   string
	stream bool
}{{"whole", false}, {"stream", true}}

func TestConformancePlainAnswer(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text("Paris is the capital."))
			a := newAgent(t, s, nil, onion.SystemPrompt("Answer briefly."))
			res, streamed := run(t, a, mode.stream, "Capital of France?")
			if res.Output != "Paris is the capital." || res.StopReason != onion.StopNatural {
				t.Fatalf("result %+v", res)
			}
			if mode.stream && streamed != res.Output {
				t.Errorf("streamed %q, want the answer", streamed)
			}
			r := s.Requests()[0]
			ar := r.Anthropic
			if ar == nil || ar.Model != "claude-test" || ar.MaxTokens != anthropic.DefaultMaxTokens || ar.Stream != mode.stream {
				t.Fatalf("request %+v", ar)
			}
			if len(ar.System) != 1 || !strings.HasPrefix(ar.System[0].Text, "Answer briefly.") {
				t.Errorf("system %+v", ar.System)
			}
			if len(ar.Messages) != 1 || ar.Messages[0].Role != "user" || ar.Messages[0].Content[0].Text != "Capital of France?" {
				t.Errorf("messages %+v", ar.Messages)
			}
			if got := r.Header.Get("X-Api-Key"); got != testKey {
				t.Errorf("x-api-key %q", got)
			}
			if got := r.Header.Get("Anthropic-Version"); got == "" {
				t.Error("no anthropic-version header")
			}
		})
	}
}

// TestConformanceByName: importing the package registers "anthropic", and
// an agent names its model, the key and base URL from the environment.
func TestConformanceByName(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("hi"), oniontest.Text("hello"))
	t.Setenv("ANTHROPIC_BASE_URL", s.AnthropicURL())
	t.Setenv("ANTHROPIC_API_KEY", testKey)
	t.Setenv("ONION_MODEL", "")
	a, err := onion.NewAgent("byname", onion.Model("anthropic/claude-sonnet-4-5"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := a.Input(context.Background(), "hi"); err != nil || out != "hi" {
		t.Fatalf("answer %q, %v", out, err)
	}
	t.Setenv("ONION_MODEL", "anthropic/claude-haiku-4-5")
	b, err := onion.NewAgent("byenv")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := b.Input(context.Background(), "hi"); err != nil || out != "hello" {
		t.Fatalf("answer %q, %v", out, err)
	}
	for i, want := range []string{"claude-sonnet-4-5", "claude-haiku-4-5"} {
		if got := s.Requests()[i].Anthropic.Model; got != want {
			t.Errorf("request %d: model %q, want %q", i, got, want)
		}
	}
}

func TestConformanceNoKey(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	a, err := onion.NewAgent("nokey", onion.Model("anthropic/claude-sonnet-4-5"), onion.Retries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Run(context.Background(), "hi")
	if !errors.Is(err, anthropic.ErrNoAPIKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("error %v, want ErrNoAPIKey naming ANTHROPIC_API_KEY", err)
	}
}

func TestConformanceOneTool(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.ToolCall{ID: "toolu_01", Name: "weather", Arguments: `{"city":"Paris"}`}),
				oniontest.Text("It is sunny."))
			res, _ := run(t, newAgent(t, s, nil, Weather), mode.stream, "Weather in Paris?")
			if res.Output != "It is sunny." || len(res.ToolCalls) != 1 || res.ToolCalls[0].Output != "sunny in Paris" {
				t.Fatalf("result %+v", res)
			}
			first := s.Requests()[0].Anthropic
			var tool struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"input_schema"`
			}
			if len(first.Tools) != 1 || json.Unmarshal(first.Tools[0], &tool) != nil || tool.Name != "weather" ||
				!strings.Contains(tool.Description, "weather in a city") || !strings.Contains(string(tool.InputSchema), `"city"`) {
				t.Errorf("tools %s", first.Tools)
			}
			msgs := s.Requests()[1].Anthropic.Messages
			if len(msgs) != 3 {
				t.Fatalf("%d messages, want prompt, call, result", len(msgs))
			}
			use := msgs[1].Content[0]
			if msgs[1].Role != "assistant" || use.Type != "tool_use" || use.ID != "toolu_01" || string(use.Input) != `{"city":"Paris"}` {
				t.Errorf("the call sent back: %+v", msgs[1])
			}
			result := msgs[2].Content[0]
			if msgs[2].Role != "user" || result.Type != "tool_result" || result.ToolUseID != "toolu_01" || result.Text != "sunny in Paris" {
				t.Errorf("the result: %+v", msgs[2])
			}
		})
	}
}

// TestConformanceParallelTools: the calls of one reply run, and their
// results go back as one user message, in the order of the calls.
func TestConformanceParallelTools(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`), oniontest.Call("weather", `{"city":"Rome"}`),
					oniontest.Call("weather", `{"city":"Oslo"}`)),
				oniontest.Text("All sunny."))
			res, _ := run(t, newAgent(t, s, nil, Weather), mode.stream, "Weather in three cities?")
			if res.Output != "All sunny." || len(res.ToolCalls) != 3 {
				t.Fatalf("result %+v", res)
			}
			msgs := s.Requests()[1].Anthropic.Messages
			if len(msgs) != 3 || len(msgs[1].Content) != 3 || len(msgs[2].Content) != 3 {
				t.Fatalf("messages %+v", msgs)
			}
			for i, city := range []string{"Paris", "Rome", "Oslo"} {
				use, result := msgs[1].Content[i], msgs[2].Content[i]
				if result.Type != "tool_result" || result.ToolUseID != use.ID || result.Text != "sunny in "+city {
					t.Errorf("result %d: %+v for %+v", i, result, use)
				}
			}
		})
	}
}

// TestConformanceStreamedToolCall: a call's arguments come in
// input_json_delta pieces of a few bytes and are joined whole.
func TestConformanceStreamedToolCall(t *testing.T) {
	args := `{"city":"Saint-Étienne du Rouvray, Seine-Maritime"}`
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("weather", args)), oniontest.Text("Cloudy there."))
	res, streamed := run(t, newAgent(t, s, nil, Weather), true, "Weather?")
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Arguments != args || res.ToolCalls[0].Output != "sunny in Saint-Étienne du Rouvray, Seine-Maritime" {
		t.Fatalf("calls %+v", res.ToolCalls)
	}
	if streamed != "Cloudy there." {
		t.Errorf("streamed %q", streamed)
	}
	if n := bytes.Count(s.Requests()[0].Raw, []byte(`"stream":true`)); n != 1 {
		t.Errorf("the request says stream %d times", n)
	}
}

// TestConformanceThinkingCarried: a signed thinking block goes back in the
// next request exactly as it came, before the call it led to.
func TestConformanceThinkingCarried(t *testing.T) {
	const thought = `The user wants the weather; call the "weather" tool <now>.`
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)).WithThinking(thought),
				oniontest.Text("Sunny.").WithThinking("Answer now."))
			a := newAgent(t, s, newModel(t, s, anthropic.Thinking(2048)), Weather)
			res, _ := run(t, a, mode.stream, "Weather in Paris?")
			if res.Output != "Sunny." {
				t.Fatalf("result %+v", res)
			}
			first := s.Requests()[0].Anthropic
			if string(first.Thinking) != `{"type":"enabled","budget_tokens":2048}` || first.MaxTokens != 2048+anthropic.DefaultMaxTokens {
				t.Errorf("thinking %s, max_tokens %d", first.Thinking, first.MaxTokens)
			}
			msgs := s.Requests()[1].Anthropic.Messages
			want := `{"type":"thinking","thinking":"The user wants the weather; call the \"weather\" tool <now>.","signature":"` + oniontest.ThinkingSignature(thought) + `"}`
			if got := string(msgs[1].Content[0].Raw); got != want {
				t.Errorf("the thinking block sent back:\n got %s\nwant %s", got, want)
			}
			if msgs[1].Content[1].Type != "tool_use" {
				t.Errorf("the call does not follow its thinking: %+v", msgs[1].Content)
			}
		})
	}
}

// TestConformanceCachedUsage: the cache's reads and writes are reported,
// and the prompt counts every input token.
func TestConformanceCachedUsage(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)).WithUsage(2000, 30).WithCache(0, 1800),
				oniontest.Text("Sunny.").WithUsage(2100, 10).WithCache(1800, 250))
			res, _ := run(t, newAgent(t, s, nil, Weather), mode.stream, "Weather?")
			want := onion.Usage{PromptTokens: 4100, CompletionTokens: 40, TotalTokens: 4140, CachedTokens: 1800, CacheWriteTokens: 2050, Requests: 2}
			if res.Usage != want {
				t.Errorf("usage %+v, want %+v", res.Usage, want)
			}
		})
	}
}

// Forecast is a typed answer.
type Forecast struct {
	City string `json:"city"`
	// Celsius is the temperature.
	Celsius int8 `json:"celsius"`
}

// TestConformanceAsk: a typed answer goes as output_config.format, the
// schema held to what Anthropic takes, and comes back as a Go value.
func TestConformanceAsk(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
				oniontest.Text(`{"city":"Paris","celsius":21}`))
			a := newAgent(t, s, nil, Weather)
			var got Forecast
			var err error
			if mode.stream {
				for ev, e := range onion.AskStream[Forecast](context.Background(), a, "Forecast for Paris?") {
					if ev.Kind == onion.EventDone {
						err = e
						if e == nil {
							got = ev.Answer.(Forecast)
						}
					}
				}
			} else {
				got, _, err = onion.Ask[Forecast](context.Background(), a, "Forecast for Paris?")
			}
			if err != nil || got != (Forecast{City: "Paris", Celsius: 21}) {
				t.Fatalf("answer %+v, %v", got, err)
			}
			for i, r := range s.Requests() {
				var oc struct {
					Format struct {
						Type   string          `json:"type"`
						Schema json.RawMessage `json:"schema"`
					} `json:"format"`
				}
				if json.Unmarshal(r.Anthropic.OutputConfig, &oc) != nil || oc.Format.Type != "json_schema" {
					t.Fatalf("request %d: output_config %s", i, r.Anthropic.OutputConfig)
				}
				schema := string(oc.Format.Schema)
				if strings.Contains(schema, `"minimum"`) || !strings.Contains(schema, `"additionalProperties":false`) ||
					!strings.Contains(schema, `minimum: -128`) || strings.Index(schema, `"city"`) > strings.Index(schema, `"celsius"`) {
					t.Errorf("request %d: schema %s", i, schema)
				}
				if r.Anthropic.ToolChoice != nil {
					t.Errorf("request %d: tool_choice %s: the answer must not force a tool", i, r.Anthropic.ToolChoice)
				}
			}
		})
	}
}

// TestConformanceBudgetStop: over its budget, the run's last request
// keeps the tools (the cached prefix holds) and forbids calls.
func TestConformanceBudgetStop(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)).WithUsage(900, 200),
		oniontest.Text("Sunny, I think."))
	res, _ := run(t, newAgent(t, s, nil, Weather, onion.TokenBudget(3000)), false, "Weather?")
	if res.StopReason != onion.StopBudget || res.Output != "Sunny, I think." {
		t.Fatalf("result %+v", res)
	}
	first, last := s.Requests()[0].Anthropic, s.Requests()[1].Anthropic
	if string(last.ToolChoice) != `{"type":"none"}` || len(last.Tools) != 1 || string(last.Tools[0]) != string(first.Tools[0]) {
		t.Errorf("the last request: tool_choice %s, tools %s", last.ToolChoice, last.Tools)
	}
}

// big is what Fetch returns: 12,000 bytes, about 3,000 tokens.
var big = strings.Repeat("lorem ipsum ", 1000)

// Fetch returns the page at url.
//
//onion:intent read
func Fetch(ctx context.Context, url string) (string, error) { return big, nil }

// TestConformanceCompaction: over CompactAfter, an older tool result goes
// as the loop's note.
func TestConformanceCompaction(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("fetch", `{"url":"a"}`)),
		oniontest.ToolCalls(oniontest.Call("fetch", `{"url":"b"}`)),
		oniontest.Text("done"))
	res, _ := run(t, newAgent(t, s, nil, Fetch, onion.CompactAfter(4500), onion.CompactWith(onion.CompactToolResults)), false, "read")
	if len(res.Compactions) != 1 || res.Output != "done" {
		t.Fatalf("result %+v", res)
	}
	results := s.Requests()[2].ToolResults()
	if len(results) != 2 || results[0].Content != loop.ToolResultNote("fetch", 3000) || results[1].Content != big {
		t.Errorf("the results sent after compaction: %d, first %.80q", len(results), results[0].Content)
	}
}

// png is a 1×1 PNG.
var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

// TestConformanceImages: images in a prompt go as image blocks before its
// text, bytes as base64 and URLs as url sources; an image a tool returned
// goes inside its tool_result.
func TestConformanceImages(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Blue."))
	c := newAgent(t, s, nil, Weather).NewConversation()
	c.SetHistory([]onion.Message{
		{Role: onion.RoleUser, Content: "What is in these?", Images: []onion.Image{
			{MIMEType: "image/png", Data: png}, {URL: "https://example.com/cat.jpg"}}},
		{Role: onion.RoleAssistant, ToolCalls: []onion.ToolRequest{{ID: "toolu_shot", Name: "screenshot", Arguments: "{}"}}},
		{Role: onion.RoleTool, ToolCallID: "toolu_shot", Name: "screenshot", Content: "the screen",
			Images: []onion.Image{{MIMEType: "image/png", Data: png}}},
		{Role: onion.RoleAssistant, Content: "A cat and a chart."},
	})
	if out, err := c.Input(context.Background(), "What color is the chart?"); err != nil || out != "Blue." {
		t.Fatalf("answer %q, %v", out, err)
	}
	msgs := s.Requests()[0].Anthropic.Messages
	if len(msgs) != 5 {
		t.Fatalf("%d messages: %+v", len(msgs), msgs)
	}
	b64 := base64.StdEncoding.EncodeToString(png)
	prompt := msgs[0].Content
	if len(prompt) != 3 || prompt[0].Type != "image" || *prompt[0].Source != (oniontest.AnthropicSource{Type: "base64", MediaType: "image/png", Data: b64}) ||
		prompt[1].Type != "image" || *prompt[1].Source != (oniontest.AnthropicSource{Type: "url", URL: "https://example.com/cat.jpg"}) ||
		prompt[2].Text != "What is in these?" {
		t.Errorf("the prompt: %+v", prompt)
	}
	result := msgs[2].Content[0]
	if result.Type != "tool_result" || len(result.Content) != 2 || result.Content[0].Text != "the screen" ||
		result.Content[1].Type != "image" || result.Content[1].Source.Data != b64 {
		t.Errorf("the tool result: %+v", result)
	}
}

// TestConformanceCutReply: a reply cut by max_tokens ends a run with
// StopLength; a call cut with it does not run, and goes back with an
// empty input, its arguments being no JSON.
func TestConformanceCutReply(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name+"/text", func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text("The answer is forty").Truncated())
			res, _ := run(t, newAgent(t, s, nil), mode.stream, "go")
			if res.StopReason != onion.StopLength || res.Output != "The answer is forty" {
				t.Errorf("result %+v", res)
			}
		})
		t.Run(mode.name+"/call", func(t *testing.T) {
			calls := 0
			spy := func(ctx context.Context, city string) (string, error) { calls++; return "", nil }
			tool, err := onion.NewTool(spy, onion.Name("weather"), onion.Description("Tells the weather."), onion.ParamNames("city"))
			if err != nil {
				t.Fatal(err)
			}
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.ToolCall{ID: "toolu_cut", Name: "weather", Arguments: `{"city":"Par`}).Truncated(),
				oniontest.Text("done"))
			res, _ := run(t, newAgent(t, s, nil, tool), mode.stream, "go")
			if calls != 0 || res.Output != "done" || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Skipped {
				t.Fatalf("%d calls ran; result %+v", calls, res)
			}
			msgs := s.Requests()[1].Anthropic.Messages
			if use := msgs[1].Content[0]; use.Type != "tool_use" || string(use.Input) != "{}" || use.ID != "toolu_cut" {
				t.Errorf("the cut call sent back: %+v", use)
			}
			if r := msgs[2].Content[0]; r.ToolUseID != "toolu_cut" || !strings.Contains(r.Text, "cut") {
				t.Errorf("its result: %+v", r)
			}
		})
	}
}

// TestConformanceRetriedOverload: a 529, a 429 with retry-after and an
// overloaded_error event before any text are sent again; the run ends
// with the answer.
func TestConformanceRetriedOverload(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.Overloaded(),
				oniontest.RateLimited(time.Millisecond),
				oniontest.StreamError("overloaded_error", "Overloaded"),
				oniontest.Text("at last"))
			res, _ := run(t, newAgent(t, s, nil, onion.Retries(3)), mode.stream, "go")
			if res.Output != "at last" || len(s.Requests()) != 4 {
				t.Fatalf("result %+v after %d requests", res, len(s.Requests()))
			}
		})
	}
}

// TestConformanceNotRetried: a 401 is not sent again, and its error names
// the API and the URL, and says what to check, without the key.
func TestConformanceNotRetried(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Error(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key `+testKey+`"}}`))
	_, err := newAgent(t, s, nil, onion.Retries(3)).Run(context.Background(), "go")
	var me *onion.ModelError
	if !errors.As(err, &me) || me.StatusCode != 401 || me.Retryable || len(s.Requests()) != 1 {
		t.Fatalf("error %v after %d requests", err, len(s.Requests()))
	}
	msg := err.Error()
	for _, want := range []string{"Anthropic Messages API", s.AnthropicURL() + "/v1/messages", "authentication_error", "ANTHROPIC_API_KEY"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, testKey) {
		t.Errorf("the error shows the key: %q", msg)
	}
}

// TestConformanceToolSchemas: the schemas onion derives are taken (an
// object at the top), and a tool the Messages API would refuse fails when
// the agent is made, naming the tool and the keyword.
func TestConformanceToolSchemas(t *testing.T) {
	s := oniontest.NewServer(t)
	m := newModel(t, s)
	if _, err := onion.NewAgent("ok", onion.WithModel(m), Weather, Fetch, GetUserCountry, RetrieveEntityInfo, onion.Strict()); err != nil {
		t.Errorf("onion's own schemas: %v", err)
	}
	for _, tc := range []struct{ name, schema, says string }{
		{"odd", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`, "keyword anyOf"},
	} {
		raw, err := onion.NewRawTool(tc.name, json.RawMessage(tc.schema), func(ctx context.Context, args json.RawMessage) (any, error) { return "", nil })
		if err != nil {
			t.Fatal(err)
		}
		_, err = onion.NewAgent("bad", onion.WithModel(m), raw)
		if err == nil || !strings.Contains(err.Error(), `tool "`+tc.name+`"`) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v", tc.schema, err)
		}
	}
}
