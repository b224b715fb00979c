package telemetry_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/telemetry"
)

// The token counts a server reports beyond input and output, as recorded
// from real servers, reach the chat span; the token metric counts them
// inside input and output, the only token types the conventions have.

// The keys as the conventions spell them.
const (
	cacheKey     = semconv.GenAIUsageCacheReadInputTokensKey
	reasoningKey = semconv.GenAIUsageReasoningOutputTokensKey
)

func TestUsageKeysAreTheConventions(t *testing.T) {
	for _, k := range []struct{ got, want attribute.Key }{
		{telemetry.CacheReadInputTokens, semconv.GenAIUsageCacheReadInputTokensKey},
		{telemetry.ReasoningTokens, semconv.GenAIUsageReasoningOutputTokensKey},
		{telemetry.InputTokens, semconv.GenAIUsageInputTokensKey},
		{telemetry.OutputTokens, semconv.GenAIUsageOutputTokensKey},
		{telemetry.TokenType, semconv.GenAITokenTypeKey},
	} {
		if k.got != k.want {
			t.Errorf("key %q, want %q", k.got, k.want)
		}
	}
}

// usageCase is a recorded first reply and the usage it reports. The run
// answers the reply's tool call, if any, with "ok", and the model then
// says "done" with no usage details.
type usageCase struct {
	name      string
	fixture   string // under oniontest/testdata/fixtures
	responses bool   // served as the Responses API
	stream    bool   // run with Stream, the fixture being a stream
	tool      string // the tool the reply calls, "" for none
	// What the reply reports.
	input, output, cached, reasoning int64
}

var usageCases = []usageCase{
	{name: "chat/cached", fixture: "compat/deepseek_stream_text_then_tool_call.sse", stream: true,
		tool: "getCurrentWeather", input: 347, output: 74, cached: 320},
	{name: "chat/reasoning", fixture: "compat/groq_stream_tool_call.sse", stream: true,
		tool: "get_something_by_name", input: 304, output: 49, reasoning: 23},
	{name: "responses/cached_and_reasoning", fixture: "responses/deepseek_reasoning_function_call.json", responses: true,
		tool: "get_temperature", input: 366, output: 63, cached: 256, reasoning: 18},
	{name: "responses/stream/cached_and_reasoning", fixture: "responses/deepseek_stream_reasoning_function_call.sse", responses: true, stream: true,
		tool: "get_temperature", input: 366, output: 59, cached: 256, reasoning: 14},
	// The servers report the details as zeros.
	{name: "chat/zero_details", fixture: "openai/chat_tool_call.json",
		tool: "getCurrentWeather", input: 81, output: 14},
	{name: "chat/stream/zero_details", fixture: "openai/chat_stream_text.sse", stream: true, input: 14, output: 13},
	{name: "responses/zero_details", fixture: "responses/openai_text.json", responses: true, input: 14, output: 50},
}

// runUsage runs c's agent and returns the chat spans in the order they
// ended and the sums of gen_ai.client.token.usage by token type.
func runUsage(t *testing.T, c usageCase) ([]sdktrace.ReadOnlySpan, map[string]int64) {
	t.Helper()
	r := newRig(t)
	steps := []oniontest.Step{oniontest.ReplayFile(t, filepath.Join("..", "oniontest", "testdata", "fixtures", c.fixture))}
	opts := []any{r.option(false), onion.APIKey(secretKey), onion.Model("gpt-test")}
	if c.tool != "" {
		steps = append(steps, oniontest.Text("done").WithUsage(5, 1))
		tool, err := onion.NewRawTool(c.tool, nil, func(context.Context, json.RawMessage) (any, error) { return "ok", nil }, onion.Read)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, tool)
	}
	if c.responses {
		opts = append(opts, onion.ResponsesAPI())
	}
	s := oniontest.NewServer(t, steps...)
	a, err := onion.NewAgent("bot", append(opts, onion.BaseURL(s.URL()))...)
	if err != nil {
		t.Fatal(err)
	}
	if c.stream {
		for _, err := range a.Stream(context.Background(), "go") {
			if err != nil {
				t.Fatal(err)
			}
		}
	} else if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}

	var chats []sdktrace.ReadOnlySpan
	for _, sp := range r.rec.Ended() {
		if sp.Name() == "chat gpt-test" {
			chats = append(chats, sp)
		}
	}
	if want := len(steps); len(chats) != want {
		t.Fatalf("%d chat spans, want %d", len(chats), want)
	}

	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "gen_ai.client.token.usage" {
				continue
			}
			h, ok := m.Data.(metricdata.Histogram[int64])
			if !ok {
				t.Fatalf("gen_ai.client.token.usage is a %T", m.Data)
			}
			for _, dp := range h.DataPoints {
				v, _ := dp.Attributes.Value("gen_ai.token.type")
				sums[v.AsString()] += dp.Sum
			}
		}
	}
	return chats, sums
}

func TestChatSpanCacheAndReasoningTokens(t *testing.T) {
	for _, c := range usageCases {
		t.Run(c.name, func(t *testing.T) {
			chats, _ := runUsage(t, c)
			got := attrs(chats[0])
			for k, want := range map[attribute.Key]int64{
				"gen_ai.usage.input_tokens": c.input, "gen_ai.usage.output_tokens": c.output,
				cacheKey: c.cached, reasoningKey: c.reasoning,
			} {
				v, ok := got[k]
				switch {
				case want == 0 && ok:
					t.Errorf("%s = %v, want it absent: the server reported none", k, v.String())
				case want != 0 && !ok:
					t.Errorf("no %s, want %d", k, want)
				case want != 0 && v.AsInt64() != want:
					t.Errorf("%s = %d, want %d", k, v.AsInt64(), want)
				}
			}
			// The follow-up reports no details at all.
			for _, sp := range chats[1:] {
				for _, k := range []attribute.Key{cacheKey, reasoningKey} {
					if v, ok := attrs(sp)[k]; ok {
						t.Errorf("the follow-up chat span has %s = %v, want it absent", k, v.String())
					}
				}
			}
		})
	}
}

func TestTokenUsageMetricCountsCacheAndReasoningInInputAndOutput(t *testing.T) {
	for _, c := range usageCases {
		t.Run(c.name, func(t *testing.T) {
			_, sums := runUsage(t, c)
			want := map[string]int64{semconv.GenAITokenTypeInput.Value.AsString(): c.input,
				semconv.GenAITokenTypeOutput.Value.AsString(): c.output}
			if c.tool != "" {
				want["input"] += 5 // the follow-up's
				want["output"]++
			}
			if len(sums) != len(want) || sums["input"] != want["input"] || sums["output"] != want["output"] {
				t.Errorf("token usage by type = %v, want %v (semconv v1.41.0 has only input and output)", sums, want)
			}
		})
	}
}
