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
// It speaks the Gemini API too, at [Server.GeminiURL] (a base URL for
// google.golang.org/genai, or GEMINI_BASE_URL): POST
// /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse, from the same steps. A reply is the
// API's JSON, pretty-printed as it sends it, or "data:" events ended by
// CRLF blank lines; the calls of a reply come whole, the first with a
// thought signature, without an ID unless the ToolCall has one (as
// Gemini 2.5 sends them); a request that asks for thoughts gets one;
// Truncated ends with finishReason MAX_TOKENS, Refused with SAFETY;
// RateLimited is a 429
// RESOURCE_EXHAUSTED with a RetryInfo; the prompt tokens a request
// shares with an earlier one (1,024 and more, at four bytes a token) are
// reported as cachedContentTokenCount, as the API's implicit cache does.
// [Request.Gemini] holds the decoded request and [Request.Body] the same
// conversation in Chat Completions terms. Like the API, it refuses with
// a 400 INVALID_ARGUMENT function responses that do not answer the calls
// before them (as many, by name and ID, in order) and, for Gemini 3
// models, a call of the current turn without its thought signature.
//
// It speaks POST /v1/messages, Anthropic's Messages API, too, from the
// same steps, as api.anthropic.com does: a message JSON body, or with
// "stream": true the events message_start, content_block_start, ping,
// content_block_delta (text_delta, input_json_delta, thinking_delta,
// signature_delta), content_block_stop, message_delta and message_stop.
// A Text step is a text block, ToolCalls tool_use blocks (streamed in
// input_json_delta pieces of a few bytes, or whole with [Step.Whole]),
// Truncated the stop_reason max_tokens, Refused the stop_reason refusal,
// StreamError an error event after
// message_start; [Step.WithThinking] puts a signed thinking block first,
// [Step.WithCache] reports cache reads and writes, and [Overloaded] is a
// 529. An Anthropic client takes [Server.AnthropicURL] as its base URL,
// of a server made with NewServer, Record (recording from
// "https://api.anthropic.com/v1") or Playback. [Request.Anthropic] holds
// the decoded request, and [Request.Body] the same conversation in Chat
// Completions terms. Like api.anthropic.com, it refuses with a 400 a
// request without max_tokens, with an empty text block, more than four
// cache breakpoints, or calls and results that do not pair up. None of
// this compiles Anthropic's SDK into a test.
//
// Each request consumes the next [Step]. [Text] and [ToolCalls] script an
// assistant turn; [Error], [RateLimited] and [StreamError] script
// failures; [Replay] and [ReplayFile] serve recorded traffic byte for
// byte; [Func] decides from the request. Modifiers reshape a step the way
// real servers and networks misbehave: [Step.Delay], [Step.CutAfter],
// [Step.NoIndex], [Step.Whole] (on the Responses API NoIndex changes
// nothing, and Whole sends each call's arguments only in its done event,
// as LM Studio does).
// Every request is kept for assertions ([Server.Requests]), or only the
// last few ([Server.KeepRequests]), and a request that finds no step left
// fails the test.
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
//
// # Recorded runs
//
// [Record] and [Playback] turn a run against a real model into a
// regression test. Record(t, upstreamURL, file) starts a Server that
// forwards each request to the real endpoint, passes each reply back as it
// comes, and writes both to file, without the API key; Playback(t, file)
// starts one that serves the replies back in order and fails the test,
// naming each field that differs, when the agent sends another request
// than the one recorded. Record once, keep the file, play it back from
// then on (record_example_test.go holds this test):
//
//	// go test -run TestWeatherRecorded -record https://api.openai.com/v1
//	// records the run again, with $OPENAI_API_KEY (never written down);
//	// plain go test plays it back.
//	var recordFrom = flag.String("record", "", "record the run again from this endpoint")
//
//	func TestWeatherRecorded(t *testing.T) {
//		const file = "testdata/weather_run.json"
//		var s *oniontest.Server
//		if *recordFrom != "" {
//			s = oniontest.Record(t, *recordFrom, file)
//		} else {
//			s = oniontest.Playback(t, file)
//		}
//		agent, err := onion.NewAgent("weather", GetWeather, onion.BaseURL(s.URL()), onion.Model("gpt-4.1-mini"))
//		if err != nil {
//			t.Fatal(err)
//		}
//		res, err := agent.Run(context.Background(), "Weather in Paris?")
//		if err != nil {
//			t.Fatal(err)
//		}
//		if len(res.ToolCalls) != 1 || res.ToolCalls[0].Arguments != `{"city":"Paris"}` {
//			t.Errorf("tool calls: %+v", res.ToolCalls)
//		}
//	}
//
// A recording is one JSON document, indented, meant to be read and edited:
//
//	{
//	  "format": "oniontest/recording/1",
//	  "volatile": ["user"],
//	  "exchanges": [
//	    {
//	      "request": {
//	        "method": "POST",
//	        "path": "/v1/chat/completions",
//	        "json": {
//	          "model": "gpt-4.1",
//	          "messages": [{"role": "user", "content": "Hi"}],
//	          "stream": false,
//	          "user": "u-1",
//	          "metadata": {"trace": "t-1"}
//	        },
//	        "volatile": ["metadata.trace"]
//	      },
//	      "response": {
//	        "status": 200,
//	        "header": {"Content-Type": "application/json"},
//	        "body": "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello!\"},\"finish_reason\":\"stop\"}]}\n"
//	      }
//	    },
//	    {
//	      "request": {
//	        "method": "POST",
//	        "path": "/v1/chat/completions",
//	        "json": {
//	          "model": "gpt-4.1",
//	          "messages": [{"role": "user", "content": "Bye"}],
//	          "stream": true,
//	          "user": "u-1"
//	        }
//	      },
//	      "response": {
//	        "status": 200,
//	        "header": {"Content-Type": "text/event-stream"},
//	        "events": [
//	          "data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Bye!\"},\"finish_reason\":\"stop\"}]}\n\n",
//	          "data: [DONE]\n\n"
//	        ]
//	      }
//	    }
//	  ]
//	}
//
// "format" is the version. "exchanges" holds the requests in the order
// they came, each with the reply it got. A request has its method, path
// and query (the path as the client sent it, with the /v1 of the server's
// URL), and its body as "json" when it is a JSON document, as it is on
// both wires, or as "body" text otherwise; no request header is kept. A
// reply has its status, the headers kept (Content-Type, Retry-After,
// Retry-After-Ms, X-Ratelimit-*, Anthropic-Ratelimit-*) and its body in
// one of "events" (an event stream, each event with its blank line),
// "body" (other text) or "body_base64" (bytes that are not UTF-8);
// joined, they are the bytes received. "volatile" lists fields that may differ from run to run, as
// paths into the request's JSON: keys and indexes joined by dots, "*" for
// any ("metadata.trace", "messages.*.name"); at the top for every request,
// on a request for that request alone, and more with the [Volatile]
// option. No field is volatile unless marked: given the same replies, an
// agent sends the same requests, so a difference is news. Recording again
// into a file keeps its top-level "volatile" list.
package oniontest
