// Package oniontest is to LLM agents what net/http/httptest is to HTTP
// clients: a real OpenAI Chat Completions server, on the loopback
// interface, that answers with replies the test scripts in advance.
//
// The server speaks POST /v1/chat/completions in both of its forms. A
// request with "stream": false gets a chat.completion JSON body; one with
// "stream": true gets chat.completion.chunk events over SSE: a role-only
// first chunk, content or tool-call argument deltas, a finish_reason chunk,
// a usage chunk with empty choices when stream_options.include_usage is
// set, and data: [DONE]. Tool-call arguments travel as a JSON string, as
// they do from api.openai.com, so whatever parses them is tested too.
//
// Each request consumes the next [Step]. [Text] and [ToolCalls] script an
// assistant turn; [Error] and [RateLimited] script failures; [Replay] and
// [ReplayFile] serve recorded traffic byte for byte; [Func] decides from the
// request. Modifiers reshape a step the way real servers and networks
// misbehave: [Step.Delay], [Step.CutAfter], [Step.NoIndex], [Step.Whole].
// Every request is recorded for assertions ([Server.Requests]), and a
// request that finds no step left fails the test.
//
// A test of an agent loop that calls one tool and then answers:
//
//	func TestWeather(t *testing.T) {
//		s := oniontest.NewServer(t,
//			oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
//			oniontest.Text("It is sunny in Paris."),
//		)
//		cfg := openai.DefaultConfig("test-key")
//		cfg.BaseURL = s.URL() // or use s.Client()
//		answer := runAgent(t, openai.NewClientWithConfig(cfg), "Weather in Paris?")
//		if answer != "It is sunny in Paris." {
//			t.Errorf("answer = %q", answer)
//		}
//		reqs := s.Requests()
//		last := reqs[len(reqs)-1].Body.Messages
//		if got := last[len(last)-1]; got.Role != openai.ChatMessageRoleTool || got.ToolCallID != "call_1" {
//			t.Errorf("the tool result was not sent back: %+v", got)
//		}
//	}
package oniontest
