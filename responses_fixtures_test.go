package onion_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// The recorded Responses API traffic of OpenAI, DeepSeek, OpenRouter,
// AWS Bedrock, Azure OpenAI and LM Studio (oniontest/testdata/fixtures/
// responses, provenance in its README), replayed through the agent on
// the Responses wire. The tools are named as in the recordings.

// responsesFixtureAgent is an agent on the Responses API with a read tool
// of every name the recordings call, each answering "result of <name>".
// It keeps tool history, so that a later run sends the recorded output
// items back.
func responsesFixtureAgent(t *testing.T, s *oniontest.Server, extra ...any) *onion.Agent {
	t.Helper()
	items := []any{onion.ResponsesAPI(), onion.MaxIterations(1), onion.KeepToolHistory()}
	for _, n := range []string{"get_capital", "get_location", "get_meaning_of_life", "get_temperature", "weather", "first_tool", "second_tool", "final_result"} {
		tool, err := onion.NewRawTool(n, nil, func(context.Context, json.RawMessage) (any, error) { return "result of " + n, nil }, onion.Read)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, tool)
	}
	return newAgent(t, s, append(items, extra...)...)
}

// chunksToSSE frames a .chunks.txt recording (one event's data per line,
// the event: lines gone) as OpenAI does: event: <type>, then the data.
func chunksToSSE(t *testing.T, chunks []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(chunks))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("chunk %q: %v", sc.Text(), err)
		}
		b.WriteString("event: " + ev.Type + "\ndata: ")
		b.Write(sc.Bytes())
		b.WriteString("\n\n")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// responsesFixture returns the recording as a replay step, and its final
// output items: the output of a JSON response, or of the stream's
// response.completed.
func responsesFixture(t *testing.T, file string) (oniontest.Step, []map[string]any) {
	t.Helper()
	body := readFixture(t, "responses/"+file)
	contentType := "application/json"
	switch {
	case strings.HasSuffix(file, ".chunks.txt"):
		body, contentType = chunksToSSE(t, body), "text/event-stream"
	case strings.HasSuffix(file, ".sse"):
		contentType = "text/event-stream"
	}
	var final struct {
		Output []map[string]any `json:"output"`
	}
	if contentType == "application/json" {
		if err := json.Unmarshal(body, &final); err != nil {
			t.Fatal(err)
		}
		return oniontest.Replay(contentType, body), final.Output
	}
	for line := range strings.Lines(string(body)) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
		var ev struct {
			Type     string          `json:"type"`
			Response json.RawMessage `json:"response"`
		}
		if !ok || json.Unmarshal([]byte(data), &ev) != nil || ev.Type != "response.completed" {
			continue
		}
		if err := json.Unmarshal(ev.Response, &final); err != nil {
			t.Fatal(err)
		}
	}
	return oniontest.Replay(contentType, body), final.Output
}

// recordedCall is one function call a recording makes.
type recordedCall struct{ name, id, arguments string }

func TestResponsesAPIReplayRecordings(t *testing.T) {
	for _, tc := range []struct {
		file  string
		calls []recordedCall
		text  string // the recorded answer's text, or its beginning
	}{
		{file: "openai_text.json", text: "I can't provide real-time updates"},
		{file: "openai_function_call.json", calls: []recordedCall{{"get_capital", "call_YfwRsW8sUxDKipwyhWTzOXCA", `{"country":"PotatoLand"}`}}},
		{file: "openai_function_call_output.json", text: "The capital of PotatoLand is Potato City."},
		{file: "openai_parallel_function_calls.json", calls: []recordedCall{
			{"get_location", "call_LWVp74L5HaH2KNvgVz9PJsrj", `{"loc_name":"Londos"}`},
			{"get_location", "call_YnRAWeTyxI91m5uNa5bxXwVO", `{"loc_name":"London"}`}}},
		{file: "openai_reasoning_function_call.json", calls: []recordedCall{{"get_meaning_of_life", "call_cp3x6W9eeyMIryJUNhgMaP5w", `{}`}}},
		{file: "deepseek_reasoning_function_call.json", calls: []recordedCall{{"get_temperature", "call_00_iD0U8IMtyIljI0ET7GLz1318", `{"city": "Tokyo"}`}}},
		{file: "azure_openai_reasoning_text.json", text: "Paris"},
		{file: "lmstudio_function_call.json", calls: []recordedCall{{"weather", "call_2866856768160095", `{"location":"San Francisco"}`}}},

		{file: "openai_stream_text.sse", text: "The capital of Minas Gerais is Belo Horizonte."},
		{file: "openai_stream_function_call.sse", calls: []recordedCall{{"get_capital", "call_kL0PCQV7M2WMoVX8V8OtYSAL", `{"country":"France"}`}}},
		{file: "openai_stream_reasoning_function_call.sse", calls: []recordedCall{{"final_result", "call_CWXgs68YprAjp6t0371hiPOI", `{"result":6666}`}}},
		{file: "openai_stream_text_then_function_call.sse", text: "I’ll check the capital lookup tool for “PotatoLand.”",
			calls: []recordedCall{{"get_capital", "call_LabG58Uhrq9kZvR52BYKjToD", `{"country":"PotatoLand"}`}}},
		{file: "openai_stream_reasoning_summary.sse", text: "I'm not a road safety professional"},
		{file: "deepseek_stream_reasoning_function_call.sse", calls: []recordedCall{{"get_temperature", "call_00_xjY8Z2BvSlzgEmmw0DtH0464", `{"city": "Tokyo"}`}}},
		{file: "openrouter_stream_reasoning_text.sse", text: "4"},
		{file: "bedrock_mantle_stream_reasoning_function_call.sse", calls: []recordedCall{{"second_tool", "call_1", `{}`}}},
		{file: "lmstudio_stream_function_call.chunks.txt", text: "I'll get the current weather information for San Francisco for you.",
			calls: []recordedCall{{"weather", "call_2025306790300011", `{"location":"San Francisco"}`}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			step, output := responsesFixture(t, tc.file)
			stream := !strings.HasSuffix(tc.file, ".json")
			steps := []oniontest.Step{step}
			if len(tc.calls) > 0 {
				steps = append(steps, oniontest.Text("final"))
			}
			s := oniontest.NewServer(t, append(steps, oniontest.Text("next answer"))...)
			a := responsesFixtureAgent(t, s).NewConversation()

			res, text := replayRun(t, a, stream)
			if len(res.ToolCalls) != len(tc.calls) {
				t.Fatalf("calls = %+v, want %v", res.ToolCalls, tc.calls)
			}
			for i, want := range tc.calls {
				c := res.ToolCalls[i]
				if c.Name != want.name || c.ID != want.id || string(c.Arguments) != want.arguments || c.Outcome != onion.Succeeded {
					t.Errorf("call %d = %s %s %s %s, want %v", i, c.Name, c.ID, c.Arguments, c.Outcome, want)
				}
			}
			wantOutput := tc.text
			if len(tc.calls) > 0 {
				wantOutput = "final"
			}
			if !strings.HasPrefix(res.Output, wantOutput) {
				t.Errorf("output %.80q, want %.80q", res.Output, wantOutput)
			}
			if stream && !strings.HasPrefix(text, tc.text) {
				t.Errorf("streamed text %.80q, want %.80q first", text, tc.text)
			}

			// A second run: the conversation so far goes back, and with
			// it every output item of the recording, as it came, each
			// call followed by its output.
			if _, err := a.Input(context.Background(), "next"); err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			sent := inputItems(t, s, len(reqs)-1)
			at := 0
			for _, want := range output {
				for at < len(sent) && !reflect.DeepEqual(sent[at], want) {
					at++
				}
				if at == len(sent) {
					t.Fatalf("output item %v was not sent back as it came; sent %v", want, sent)
				}
			}
			for _, want := range tc.calls {
				if toolMessages(t, s, len(reqs)-1)[want.id] != "result of "+want.name {
					t.Errorf("no function_call_output for %s in %s", want.id, reqs[len(reqs)-1].Raw)
				}
			}
		})
	}
}

// replayRun runs "go", streamed or not, and returns the result and the
// text streamed.
func replayRun(t *testing.T, a *onion.Conversation, stream bool) (*onion.Result, string) {
	t.Helper()
	if !stream {
		res, err := a.Run(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		return res, ""
	}
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
	return res, text.String()
}

// itemKey is what must match between the items a recording's client sent
// and those the agent sends: the type, the call's ID, and a reasoning
// item's ID and encrypted content.
func itemKey(it map[string]any) string {
	key, _ := it["type"].(string)
	if key == "" {
		key = "message"
	}
	for _, k := range []string{"role", "call_id"} {
		if v, ok := it[k].(string); ok {
			key += " " + v
		}
	}
	if key == "reasoning" {
		enc, _ := it["encrypted_content"].(string)
		key += " " + it["id"].(string) + " " + enc
	}
	return key
}

// TestResponsesAPIFollowUpsMatchRecordedRequests: after a recorded
// response, the agent's next request carries the same items, in the same
// order, as the request the recording's own client sent next (and which
// the provider accepted).
func TestResponsesAPIFollowUpsMatchRecordedRequests(t *testing.T) {
	for _, tc := range []struct{ response, request string }{
		{"openai_function_call.json", "openai_function_call_output.request.json"},
		{"openai_parallel_function_calls.json", "openai_parallel_function_call_output.request.json"},
		{"openai_reasoning_function_call.json", "openai_reasoning_function_call_output.request.json"},
		{"deepseek_reasoning_function_call.json", "deepseek_function_call_output.request.json"},
	} {
		t.Run(tc.response, func(t *testing.T) {
			step, _ := responsesFixture(t, tc.response)
			s := oniontest.NewServer(t, step, oniontest.Text("final"))
			if _, err := responsesFixtureAgent(t, s, onion.MaxIterations(2)).Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			var recorded struct {
				Input []map[string]any `json:"input"`
				Tools []map[string]any `json:"tools"`
			}
			if err := json.Unmarshal(readFixture(t, "responses/"+tc.request), &recorded); err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, it := range recorded.Input {
				// pydantic-ai sends an empty assistant message before the
				// calls; the calls are what the provider needs.
				if it["role"] == "assistant" && it["content"] == "" {
					continue
				}
				want = append(want, itemKey(it))
			}
			for _, it := range inputItems(t, s, 1) {
				got = append(got, itemKey(it))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("follow-up items:\n got %q\nwant %q", got, want)
			}
			// The tools have the recorded flat shape: no function wrapper.
			var tool map[string]any
			if err := json.Unmarshal(s.Requests()[1].Responses.Tools[0], &tool); err != nil {
				t.Fatal(err)
			}
			for k := range tool {
				if _, ok := recorded.Tools[0][k]; !ok {
					t.Errorf("tool key %q is not in the recorded request's tools", k)
				}
			}
		})
	}
}

func TestResponsesAPIReplayErrors(t *testing.T) {
	for _, tc := range []struct {
		file        string
		status      int
		contentType string
		code        string
		requests    int // with Retries(1)
	}{
		{"openai_error_400_decimal_below_min_value.json", 400, "application/json", "decimal_below_min_value", 1},
		{"openai_error_400_reasoning_without_following_item.json", 400, "application/json", "", 1},
		{"openai_error_400_model_not_found.json", 400, "application/json", "model_not_found", 1},
		// The recording keeps no status; OpenAI's guide lists it under 429.
		{"openai_error_insufficient_quota.json", 429, "application/json", "insufficient_quota", 2},
		{"deepseek_error_400_no_tool_output.json", 400, "application/octet-stream", "invalid_request_error", 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body := readFixture(t, "responses/"+tc.file)
			var recorded struct{ Error struct{ Message string } }
			if err := json.Unmarshal(body, &recorded); err != nil {
				t.Fatal(err)
			}
			step := oniontest.ReplayStatus(tc.status, tc.contentType, body)
			for _, stream := range []bool{false, true} {
				s := oniontest.NewServer(t, step, step)
				a := responsesFixtureAgent(t, s, onion.Retries(1))
				var err error
				if stream {
					for _, e := range a.Stream(context.Background(), "go") {
						err = errors.Join(err, e)
					}
				} else {
					_, err = a.Run(context.Background(), "go")
				}
				var apiErr *openai.APIError
				if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tc.status || fmtAny(apiErr.Code) != fmtAny(tc.code) && tc.code != "" ||
					apiErr.Message != recorded.Error.Message {
					t.Errorf("stream %v: err = %v, want the recorded %d with code %q", stream, err, tc.status, tc.code)
				}
				if n := len(s.Requests()); n != tc.requests {
					t.Errorf("stream %v: %d requests, want %d", stream, n, tc.requests)
				}
			}
		})
	}
	t.Run("openai_stream_error_insufficient_quota.chunks.txt", func(t *testing.T) {
		body := chunksToSSE(t, readFixture(t, "responses/openai_stream_error_insufficient_quota.chunks.txt"))
		s := oniontest.NewServer(t, oniontest.Replay("text/event-stream", body))
		var err error
		for _, e := range responsesFixtureAgent(t, s).Stream(context.Background(), "go") {
			err = errors.Join(err, e)
		}
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != "insufficient_quota" || apiErr.Type != "insufficient_quota" ||
			!strings.HasPrefix(apiErr.Message, "You exceeded your current quota") {
			t.Errorf("err = %v, want the error event's quota error", err)
		}
		if n := len(s.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

// TestResponsesAPIStreamSplitAnywhere serves recorded streams in pieces of
// a few bytes, cut anywhere (inside a line, inside a UTF-8 character), as
// a network may deliver them.
func TestResponsesAPIStreamSplitAnywhere(t *testing.T) {
	for _, file := range []string{"openai_stream_text_then_function_call.sse", "bedrock_mantle_stream_reasoning_function_call.sse", "openrouter_stream_reasoning_text.sse"} {
		body := readFixture(t, "responses/"+file)
		for _, size := range []int{1, 3, 7, 100} {
			var served int
			var finals int
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served++
				if served > 1 {
					finals++
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = w.Write([]byte("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"final\"}]}]}}\n\n"))
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				rc := http.NewResponseController(w)
				for b := body; len(b) > 0; b = b[min(size, len(b)):] {
					if _, err := w.Write(b[:min(size, len(b))]); err != nil {
						return
					}
					_ = rc.Flush()
				}
			}))
			a, err := onion.NewAgent("t", onion.BaseURL(srv.URL+"/v1"), onion.APIKey("k"), onion.ResponsesAPI(), onion.MaxIterations(1),
				mustRawTool(t, "get_capital"), mustRawTool(t, "second_tool"))
			if err != nil {
				t.Fatal(err)
			}
			res, text := replayRun(t, a.NewConversation(), true)
			srv.Close()
			wantCalls := map[string]int{"openrouter_stream_reasoning_text.sse": 0}[file]
			if _, ok := map[string]bool{"openrouter_stream_reasoning_text.sse": true}[file]; !ok {
				wantCalls = 1
			}
			if len(res.ToolCalls) != wantCalls || (wantCalls == 0 && res.Output != "4") {
				t.Errorf("%s in pieces of %d: calls %+v, output %q", file, size, res.ToolCalls, res.Output)
			}
			if file == "openai_stream_text_then_function_call.sse" && !strings.HasPrefix(text, "I’ll check the capital lookup tool for “PotatoLand.”") {
				t.Errorf("%s in pieces of %d: text %q", file, size, text)
			}
		}
	}
}

func mustRawTool(t *testing.T, name string) *onion.Tool {
	t.Helper()
	tool, err := onion.NewRawTool(name, nil, func(context.Context, json.RawMessage) (any, error) { return "ok", nil }, onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestResponsesAPIReasoningSurvivesSavedHistory: the output items travel
// in the saved conversation, so an agent restored from MarshalHistory
// sends the recorded encrypted reasoning back as it came.
func TestResponsesAPIReasoningSurvivesSavedHistory(t *testing.T) {
	step, output := responsesFixture(t, "openai_reasoning_function_call.json")
	first := oniontest.NewServer(t, step, oniontest.Text("final"))
	a := responsesFixtureAgent(t, first, onion.MaxIterations(2)).NewConversation()
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	saved, err := a.MarshalHistory()
	if err != nil {
		t.Fatal(err)
	}

	next := oniontest.NewServer(t, oniontest.Text("again"))
	b := responsesFixtureAgent(t, next).NewConversation()
	if err := b.UnmarshalHistory(saved); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Input(context.Background(), "next"); err != nil {
		t.Fatal(err)
	}
	sent := inputItems(t, next, 0)
	if len(sent) < 2 || !reflect.DeepEqual(sent[1], output[0]) || output[0]["type"] != "reasoning" {
		t.Errorf("restored agent sent %v, want the recorded reasoning item %v second", sent, output[0])
	}
}

// TestResponsesAPIReasoningDeltas: the Responses wire streams reasoning
// (summary text on OpenAI, reasoning text on OpenRouter, DeepSeek and LM
// Studio) as Delta.Reasoning, apart from the answer's text, and the reply
// holds it whole.
func TestResponsesAPIReasoningDeltas(t *testing.T) {
	for _, tc := range []struct{ file, reasoning, text string }{
		{"openai_stream_reasoning_summary.sse", "**Providing street crossing", "I'm not a road safety professional"},
		{"openrouter_stream_reasoning_text.sse", "The user asks", "4"},
		{"deepseek_stream_reasoning_function_call.sse", "The user asks about tem", ""},
		{"lmstudio_stream_function_call.chunks.txt", "The user is asking for", "I'll get the current weather"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			step, _ := responsesFixture(t, tc.file)
			s := oniontest.NewServer(t, step)
			m := responsesFixtureAgent(t, s).LanguageModel()
			var reasoning, text strings.Builder
			resp, err := m.Generate(context.Background(), &onion.Request{Model: "m", Messages: []onion.Message{{Role: onion.RoleUser, Content: "go"}}},
				func(d onion.Delta) { reasoning.WriteString(d.Reasoning); text.WriteString(d.Text) })
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(reasoning.String(), tc.reasoning) || !strings.HasPrefix(text.String(), tc.text) {
				t.Errorf("streamed reasoning %.60q and text %.60q, want %q and %q first", reasoning.String(), text.String(), tc.reasoning, tc.text)
			}
			if !strings.HasPrefix(resp.Message.Reasoning, tc.reasoning) || resp.Message.Content != text.String() || resp.ID == "" || resp.Usage.ReasoningTokens == 0 {
				t.Errorf("reply: reasoning %.60q, content %.60q, id %q, usage %+v", resp.Message.Reasoning, resp.Message.Content, resp.ID, resp.Usage)
			}
		})
	}
}
