// Package oniontest is to LLM agents what net/http/httptest is to HTTP
// clients: a real OpenAI server, on the loopback
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
// It also speaks POST /v1/responses, the Responses API, from the same
// steps: JSON, or with "stream": true the event stream api.openai.com sends
// (response.created, response.in_progress, output_item.added, content part
// and output_text.delta or function_call_arguments.delta events, the done
// events, response.completed), each event framed with its "event:" line
// and numbered by sequence_number. A tool call is a function_call item
// whose call_id is the call's ID. [Request.Responses] holds the decoded
// request, and [Request.Body] the same conversation in Chat Completions
// terms, so a test's assertions hold on either wire. Like api.openai.com,
// it refuses with a 400 a stateless conversation (no
// previous_response_id) in which a call and its output do not pair up or
// a reasoning item has nothing after it.
//
// Each request consumes the next [Step]. [Text] and [ToolCalls] script an
// assistant turn; [Error], [RateLimited] and [StreamError] script
// failures; [Replay] and [ReplayFile] serve recorded traffic byte for
// byte; [Func] decides from the request. Modifiers reshape a step the way
// real servers and networks misbehave: [Step.Delay], [Step.CutAfter],
// [Step.NoIndex], [Step.Whole] (on the Responses API NoIndex changes
// nothing, and Whole sends each call's arguments only in its done event,
// as LM Studio does).
// Every request is recorded for assertions ([Server.Requests]), and a
// request that finds no step left fails the test.
//
// A test of an agent that calls one tool and then answers, where
// GetWeather is a documented Go func (example_test.go holds this test and
// Example_agent):
//
//	func TestWeather(t *testing.T) {
//		s := oniontest.NewServer(t,
//			oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
//			oniontest.Text("It is sunny in Paris."),
//		)
//		agent, err := onion.NewAgent("weather", GetWeather, onion.BaseURL(s.URL()), onion.APIKey("test"))
//		if err != nil {
//			t.Fatal(err)
//		}
//		answer, err := agent.Input(context.Background(), "Weather in Paris?")
//		if err != nil || answer != "It is sunny in Paris." {
//			t.Errorf("answer = %q, %v", answer, err)
//		}
//		reqs := s.Requests()
//		if got := reqs[1].ToolResults(); len(got) != 1 || got[0].Content != "sunny in Paris" {
//			t.Errorf("the tool result sent back: %+v", got)
//		}
//	}
package oniontest
