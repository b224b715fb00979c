package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// The recorded responses of real servers, replayed through the loop. The
// tools are named as in the recordings.

// GetCurrentWeather gets the current weather in a location.
//
// location: the city and state, e.g. San Francisco, CA
// unit: celsius or fahrenheit
//
//onion:intent read
func GetCurrentWeather(location string, unit *string) string { return "sunny in " + location }

// GetCurrentTime gets the current time in a location.
//
// location: the city
//
//onion:intent read
func GetCurrentTime(location string) string { return "noon in " + location }

func fixture(t *testing.T, name string) oniontest.Step {
	return oniontest.ReplayFile(t, filepath.Join("oniontest", "testdata", "fixtures", name))
}

func weatherAgent(t *testing.T, s *oniontest.Server, extra ...any) *onion.Agent {
	tools := []any{onion.MaxIterations(1), GetCurrentWeather, GetCurrentTime}
	for _, n := range []string{"calculator", "get_weather", "getCurrentWeather", "getCurrentTime", "weather", "final_result", "run_command", "get_something_by_name"} {
		tool, err := onion.NewRawTool(n, nil, func(context.Context, json.RawMessage) (any, error) { return "ok", nil }, onion.Read)
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	return newAgent(t, s, append(tools, extra...)...)
}

func TestReplayResponses(t *testing.T) {
	for _, tc := range []struct {
		file  string
		calls int
	}{
		{"openai/chat_tool_call.json", 1},
		{"openai/chat_parallel_tool_calls.json", 2},
		{"openai/chat_legacy_function_call.json", 1},
		{"compat/ollama_v1_chat_tool_call.json", 1},
		// Gemini's recorded call leaves out a required argument: the model
		// is told so, under the id the agent gave the call.
		{"compat/gemini_openai_compat_tool_call_empty_id.json", 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := oniontest.NewServer(t, fixture(t, tc.file), oniontest.Text("final"))
			res, err := weatherAgent(t, s).Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ToolCalls) != tc.calls || res.Output != "final" {
				t.Fatalf("calls %+v, output %q", res.ToolCalls, res.Output)
			}
			msgs := toolMessages(t, s, 1)
			for _, c := range res.ToolCalls {
				wantOutcome := onion.Succeeded
				if strings.Contains(tc.file, "gemini") {
					wantOutcome = onion.Failed
				}
				if c.ID == "" || msgs[c.ID] == "" || c.Outcome != wantOutcome {
					t.Errorf("call %+v got message %q", c, msgs[c.ID])
				}
			}
			// The assistant message is sent back whole, with the same ids.
			sent := s.Requests()[1].Body.Messages
			var assistant openai.ChatCompletionMessage
			for _, m := range sent {
				if len(m.ToolCalls) > 0 {
					assistant = m
				}
			}
			if len(assistant.ToolCalls) != tc.calls || assistant.ToolCalls[0].ID != res.ToolCalls[0].ID {
				t.Errorf("assistant message sent back = %+v", assistant)
			}
		})
	}
	for _, file := range []string{"openai/chat_text.json", "openai/chat_tool_result_followup.json", "compat/gemini_openai_compat_tool_result_followup.json"} {
		t.Run(file, func(t *testing.T) {
			s := oniontest.NewServer(t, fixture(t, file))
			res, err := weatherAgent(t, s).Run(context.Background(), "go")
			if err != nil || res.Output == "" || res.StopReason != onion.StopNatural {
				t.Errorf("err %v, result %+v", err, res)
			}
		})
	}
}

func TestReplayStreams(t *testing.T) {
	for _, tc := range []struct {
		file  string
		calls int
		text  bool
	}{
		{"openai/chat_stream_tool_call.sse", 1, false},
		{"openai/chat_stream_parallel_tool_calls.sse", 2, false},
		{"compat/ollama_v1_stream_parallel_tool_calls.sse", 2, false},
		{"compat/vllm_stream_tool_call.sse", 1, false},
		{"compat/openrouter_stream_tool_call_gemini.sse", 1, false},
		{"compat/groq_stream_tool_call.sse", 1, false},
		{"compat/deepseek_stream_text_then_tool_call.sse", 1, true},
		{"openai/chat_stream_text.sse", 0, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := oniontest.NewServer(t, fixture(t, tc.file), oniontest.Text("final"))
			a := weatherAgent(t, s)
			var text strings.Builder
			var res *onion.Result
			for e, err := range a.Stream(context.Background(), "go") {
				if err != nil {
					t.Fatal(err)
				}
				if e.Kind == onion.EventTextDelta {
					text.WriteString(e.Text)
				}
				res = e.Result
			}
			if len(res.ToolCalls) != tc.calls {
				t.Fatalf("calls = %+v", res.ToolCalls)
			}
			for _, c := range res.ToolCalls {
				if c.Outcome != onion.Succeeded || c.ID == "" {
					t.Errorf("call %+v", c)
				}
			}
			if tc.text && text.Len() == 0 {
				t.Error("no text deltas")
			}
		})
	}
}

func TestReplayErrors(t *testing.T) {
	for _, tc := range []struct {
		file   string
		status int
		want   string
	}{
		{"openai/error_400_unsupported_value.json", 400, "unsupported_value"},
		{"openai/error_400_invalid_param.json", 400, "web_search_options"},
		{"openai/error_404_model_not_found.json", 404, "model_not_found"},
		{"compat/groq_error_400_tool_use_failed.json", 400, "tool_use_failed"},
		{"compat/openrouter_error_429_rate_limit.json", 429, "429"},
		{"compat/openrouter_error_429_provider.json", 429, "Provider returned error"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body := readFixture(t, tc.file)
			s := oniontest.NewServer(t, oniontest.ReplayStatus(tc.status, "application/json", body), oniontest.ReplayStatus(tc.status, "application/json", body))
			_, err := weatherAgent(t, s, onion.Retries(1)).Run(context.Background(), "go")
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tc.status {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error()+" "+codeText(apiErr), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if want := map[bool]int{true: 2, false: 1}[tc.status == 429]; len(s.Requests()) != want {
				t.Errorf("%d requests, want %d", len(s.Requests()), want)
			}
		})
	}
	for _, file := range []string{"compat/openrouter_stream_error_in_chunk.sse", "compat/groq_stream_error_event.sse"} {
		t.Run(file, func(t *testing.T) {
			s := oniontest.NewServer(t, fixture(t, file))
			var err error
			for _, e := range weatherAgent(t, s, onion.Retries(0)).Stream(context.Background(), "go") {
				if e != nil {
					err = e
				}
			}
			if err == nil || !strings.Contains(err.Error(), "error") {
				t.Errorf("a stream carrying an error ended with err = %v", err)
			}
		})
	}
}

func codeText(e *openai.APIError) string {
	text := fmtAny(e.Code)
	if e.Param != nil {
		text += " " + *e.Param
	}
	return text
}

func fmtAny(v any) string { return strings.TrimSpace(fmt.Sprint(v)) }

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("oniontest", "testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
