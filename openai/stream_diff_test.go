package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// The streams' differential tests: the same bytes go to the wire as it
// reads streams now (its own event reader, chunks read by scanner) and as
// it read them through go-openai (legacy_stream_test.go), and the two
// must give the same deltas, the same response and the same error.

// replayDoer answers every request with body, with the Content-Type
// contentType, read through wrap when it is not nil.
type replayDoer struct {
	body        []byte
	contentType string
	wrap        func(io.Reader) io.Reader
}

func (d replayDoer) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	var body io.Reader = bytes.NewReader(d.body)
	if d.wrap != nil {
		body = d.wrap(body)
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"Content-Type": {d.contentType}},
		Body: io.NopCloser(body), Request: req}, nil
}

// streamResult is what a wire made of a stream.
type streamResult struct {
	deltas []loop.Delta
	resp   *loop.Response
	err    error
}

// replayStream sends a streamed request on the Responses API, if
// responses, else Chat Completions, to a server that answers d, and reads
// the reply as the wire does, or with legacy as it did through go-openai.
func replayStream(d replayDoer, responses, legacy bool) streamResult {
	cfg := goopenai.DefaultConfig("test-key")
	cfg.BaseURL = "http://stream.test/v1"
	cfg.HTTPClient = d
	client := recordingClient(goopenai.NewClientWithConfig(cfg))
	ctx, hint := withRetryAfter(context.Background())
	var r streamResult
	onDelta := func(d loop.Delta) { r.deltas = append(r.deltas, d) }
	chat := goopenai.ChatCompletionRequest{Model: "gpt-4o-mini"}
	resp := goopenai.CreateResponseRequest{Model: "gpt-4o-mini"}
	switch {
	case !responses && legacy:
		r.resp, r.err = legacyChatStream(ctx, client, chat, onDelta, hint)
	case !responses:
		r.resp, r.err = newChatModel(client).stream(ctx, chat, onDelta, hint)
	case legacy:
		r.resp, r.err = legacyResponsesStream(ctx, client, resp, onDelta, hint)
	default:
		m := &responsesModel{client: client, splice: splices(client), emptyLimit: emptyLimit(client)}
		r.resp, r.err = m.stream(ctx, resp, onDelta, hint)
	}
	return r
}

// chatFieldsRead are the fields of go-openai's chunk the Chat wire reads,
// as encoding/json names them in an UnmarshalTypeError.
var chatFieldsRead = map[string]bool{
	"id": true, "model": true, "choices": true, "choices.delta": true, "choices.finish_reason": true,
	"choices.delta.content": true, "choices.delta.reasoning_content": true,
	"choices.delta.function_call": true, "choices.delta.function_call.name": true, "choices.delta.function_call.arguments": true,
	"choices.delta.tool_calls": true, "choices.delta.tool_calls.index": true, "choices.delta.tool_calls.id": true,
	"choices.delta.tool_calls.function": true, "choices.delta.tool_calls.function.name": true,
	"choices.delta.tool_calls.function.arguments": true,
}

// unreadField reports whether err is encoding/json finding a value of the
// wrong type in a field of go-openai's chunk that the wire does not read
// (and so no longer decodes).
func unreadField(err error) bool {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		return false
	}
	// The embedded ChatCompletionStreamResponse names itself in the path.
	f := strings.TrimPrefix(strings.ToLower(te.Field), "chatcompletionstreamresponse.")
	return !chatFieldsRead[f] && !strings.HasPrefix(f, "usage") && !strings.HasPrefix(f, "error")
}

// sameStream checks that the wire reads d as it did through go-openai,
// and returns what it made of it.
func sameStream(t *testing.T, d replayDoer, responses bool) streamResult {
	t.Helper()
	was, now := replayStream(d, responses, true), replayStream(d, responses, false)
	if !responses && was.err != nil && unreadField(was.err) {
		// A field the wire does not read is no longer decoded: where
		// go-openai stopped at it, the wire reads on, and what it makes
		// of the rest has no reference here.
		return now
	}
	if (was.err == nil) != (now.err == nil) {
		t.Fatalf("error %v, was %v", now.err, was.err)
	}
	var te *json.UnmarshalTypeError
	if was.err != nil && !errors.As(was.err, &te) && was.err.Error() != now.err.Error() {
		t.Fatalf("error\n%v\nwas\n%v", now.err, was.err)
	}
	if !reflect.DeepEqual(now.deltas, was.deltas) {
		t.Fatalf("deltas\n%q\nwere\n%q", now.deltas, was.deltas)
	}
	if !reflect.DeepEqual(now.resp, was.resp) {
		g, _ := json.Marshal(now.resp)
		w, _ := json.Marshal(was.resp)
		t.Fatalf("response\n%s\nwas\n%s", g, w)
	}
	return now
}

// streamFixture is a recorded stream.
type streamFixture struct {
	name        string
	body        []byte
	contentType string
	responses   bool // a Responses API stream, else Chat Completions
	cut         bool // the recording was cut before the stream's end
}

// streamFixtures are every recorded stream the repository holds: the
// .sse files of oniontest's fixtures, the Responses API's .chunks.txt
// recordings framed as OpenAI frames them, and the streams of llama.cpp's
// recorded exchanges.
func streamFixtures(t testing.TB) []streamFixture {
	t.Helper()
	root := filepath.Join("..", "oniontest", "testdata", "fixtures")
	var out []streamFixture
	for _, dir := range []string{"openai", "compat", "responses"} {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*"))
		for _, file := range files {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case strings.HasSuffix(file, ".sse"):
			case strings.HasSuffix(file, ".chunks.txt"):
				body = frameChunks(t, body)
			default:
				continue
			}
			out = append(out, streamFixture{dir + "/" + filepath.Base(file), body, "text/event-stream", dir == "responses", false})
		}
	}
	jsonl, _ := filepath.Glob(filepath.Join(root, "llamacpp", "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join("testdata", "llamacpp", "*.jsonl"))
	for _, file := range append(jsonl, more...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var e struct {
				Path        string              `json:"path"`
				RespHeaders map[string][]string `json:"resp_headers"`
				RespBody    json.RawMessage     `json:"resp_body"`
				ReadError   string              `json:"read_error"`
			}
			if err := json.Unmarshal(line, &e); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var sse string
			if json.Unmarshal(e.RespBody, &sse) != nil || !strings.HasPrefix(e.RespHeaders["Content-Type"][0], "text/event-stream") {
				continue
			}
			out = append(out, streamFixture{"llamacpp/" + filepath.Base(file) + "#" + string(rune('1'+i)), []byte(sse),
				e.RespHeaders["Content-Type"][0], e.Path == "/v1/responses", e.ReadError != ""})
		}
	}
	if len(out) < 20 {
		t.Fatalf("found %d recorded streams", len(out))
	}
	return out
}

// frameChunks frames a .chunks.txt recording (one event's data per line)
// as OpenAI does: event: <type>, then the data.
func frameChunks(t testing.TB, chunks []byte) []byte {
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
	return b.Bytes()
}

// TestStreamFixturesMatchGoOpenAI replays every recorded stream through
// both readers, whole and a byte at a time: the same deltas, response and
// error, word for word. The recordings of errors end in their error; the
// others give text or calls, but for a stream cut before any delta.
func TestStreamFixturesMatchGoOpenAI(t *testing.T) {
	for _, fx := range streamFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			for _, wrap := range []func(io.Reader) io.Reader{nil, iotest.OneByteReader, iotest.HalfReader} {
				r := sameStream(t, replayDoer{fx.body, fx.contentType, wrap}, fx.responses)
				wantErr := strings.Contains(fx.name, "error")
				if (r.err != nil) != wantErr {
					t.Fatalf("error %v", r.err)
				}
				if !wantErr && !fx.cut && r.resp.Message.Content == "" && len(r.resp.Message.ToolCalls) == 0 && !strings.Contains(fx.name, "22-go-lengthstream") {
					t.Errorf("nothing read: %+v", r.resp)
				}
			}
		})
	}
}

// seedOf is a recorded stream short enough for the fuzzer to work on: its
// first events and its last, up to about 4 KiB (TestStreamFixturesMatchGoOpenAI
// replays the whole).
func seedOf(body []byte) []byte {
	if len(body) <= 4<<10 {
		return body
	}
	events := bytes.SplitAfter(body, []byte("\n\n"))
	var head, tail []byte
	for _, e := range events {
		if len(head)+len(e) > 2<<10 {
			break
		}
		head = append(head, e...)
	}
	for i := len(events) - 1; i >= 0 && len(tail)+len(events[i]) <= 2<<10; i-- {
		tail = append(append([]byte(nil), events[i]...), tail...)
	}
	return append(head, tail...)
}

// chatSeeds are streams that reach the corners of the Chat wire's reading:
// fragments of two calls interleaved, escapes, surrogates and invalid
// UTF-8, names repeated or in capitals, fields of odd types, the legacy
// function_call, errors in and around the stream, lines cut short.
var chatSeeds = []string{
	"data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5,\"prompt_tokens_details\":{\"cached_tokens\":1}}}\n\ndata: [DONE]\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\"a\\n\\u00e9\\ud83d\\ude00\\ud800x\\\"\\/\\\\ \xff\xc3(\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"reasoning_content\":\"\\t\\b\\f\\r\\uDC00\\u0000\"}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":null}}],\"choices\":[{}]}\n\ndata: {\"ID\":\"x\",\"Choices\":[{\"Delta\":{\"Content\":\"hi\"}}]}\n\ndata: {\"id\":\"\\u0078\",\"c\\u0068oices\":[{\"delta\":{\"content\":\"k\"}}]}\n\n",
	"data: {\"created\":\"x\",\"choices\":[{\"index\":\"0\",\"logprobs\":5,\"delta\":{\"role\":1,\"content\":\"ok\",\"tool_calls\":[{\"index\":null,\"id\":\"c\",\"type\":3,\"function\":{\"name\":\"n\",\"arguments\":\"{}\"}},null,{\"index\":1.5}]}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"function_call\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}}]}\n\ndata: {\"choices\":[{\"delta\":{\"function_call\":{\"arguments\":\"1}\"}},\"finish_reason\":\"function_call\"}]}\n\ndata: [DONE]\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"error\":{\"message\":\"boom\",\"code\":429}}\n\ndata: [DONE]\n\n",
	": keepalive\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\nevent: error\ndata: {\"error\":{\"message\":\"late\",\"type\":\"server_error\"}}\n\n",
	"{\n  \"error\": {\n    \"message\": \"bad key\",\n    \"code\": \"invalid_api_key\"\n  }\n}\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}],\"error\":{\"code\":400,\"message\":\"Token limit reached\"}}\n\n",
	"data:\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}",
	"data:{\"choices\":[{\"delta\":{\"content\":\"y\"}}]}\r\n\r\n  data: \t{\"choices\":null}\n\ndata: {\"choices\":[null,{\"delta\":null,\"finish_reason\":null}]} \n\ndata: [DONE]\ndata: {\"choices\":[{\"delta\":{\"content\":\"after\"}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":5}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"f\"}}]}}]}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_2\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\"}},{\"function\":{\"arguments\":\"}\"}},{\"id\":\"b\",\"function\":{\"name\":\"g\"}}]}}]}\n\n",
	strings.Repeat(": ping\n", 301) + "data: {\"choices\":[{\"delta\":{\"content\":\"z\"}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("é", 3000) + "\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("\\u00e9", 2000) + "\"}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]} {}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("[", 70) + "\"}}],\"x\":" + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "}\n\n",
	// Gemini 3's signed calls, and the members around them in odd shapes.
	signedStream,
	"data: {\"choices\":[{\"delta\":{\"reasoning\":5,\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"},\"extra_content\":{\"google\":{\"thought_signature\":\"s1\"}}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"reasoning\":{\"x\":1},\"tool_calls\":[{\"index\":0,\"extra_content\":null},{\"index\":1,\"id\":\"b\",\"Extra_Content\":{\"k\":2},\"function\":{\"name\":\"g\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"reasoning\":\"r\",\"tool_calls\":[{\"index\":0,\"extra_content\":[1]},{\"index\":1,\"extra_content\":{ \"k\" : 3 }}]}}]}\n\n",
	// OpenRouter's reasoning_details, in pieces, and in odd shapes.
	"data: {\"choices\":[{\"delta\":{\"reasoning\":\"Th\",\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"Th\",\"signature\":\"\",\"format\":\"anthropic-claude-v1\",\"index\":0}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"reasoning\":\"is\",\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"is\",\"index\":0}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"reasoning_details\":[{\"type\":\"reasoning.text\",\"signature\":\"c2ln\",\"index\":0},{\"type\":\"reasoning.encrypted\",\"data\":\"ZW5j\",\"id\":null,\"index\":1}]}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"4\",\"reasoning_details\":[]}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"reasoning_details\":{\"x\":1}}}]}\n\ndata: {\"choices\":[{\"delta\":{\"Reasoning_Details\":[{\"index\":99}],\"content\":\"a\"}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"reasoning_details\":[{\"text\":\"a\"},{\"text\":\"b\",\"index\":2},{\"text\":\"c\",\"index\":1}, 7]}}]}\n\n",
	// Refusals, and a refusal beside text, in odd shapes.
	"data: {\"choices\":[{\"delta\":{\"content\":null,\"refusal\":\"No\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"refusal\":\" way\"},\"finish_reason\":\"stop\"}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\"a\",\"Refusal\":\"b\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"refusal\":5}}]}\n\n",
	"data: {\"choices\":[{\"delta\":{\"refusal\":\"x\",\"refusal\":null},\"finish_reason\":\"length\"}]}\n\n",
}

// FuzzChatStreamMatchesGoOpenAI holds the Chat wire's reading of any
// stream to its reading through go-openai: the same deltas, response and
// error (word for word but for encoding/json's naming of its types). A
// chunk that go-openai's types refused for a field the wire does not read
// (a "created" that is a string) is now read.
func FuzzChatStreamMatchesGoOpenAI(f *testing.F) {
	for _, fx := range streamFixtures(f) {
		if !fx.responses {
			f.Add(seedOf(fx.body), true)
		}
	}
	for _, s := range chatSeeds {
		f.Add([]byte(s), true)
	}
	f.Add([]byte(chatSeeds[6]), false)
	f.Fuzz(func(t *testing.T, body []byte, sse bool) {
		ct := "application/json"
		if sse {
			ct = "text/event-stream"
		}
		sameStream(t, replayDoer{body: body, contentType: ct}, false)
	})
}

// responsesSeeds are the like for the Responses API.
var responsesSeeds = []string{
	"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c\",\"name\":\"f\",\"arguments\":\"\"}}\n\n" +
		"data: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"item_id\":\"fc_1\",\"delta\":\"{\\\"a\\\":\"}\n\n" +
		"data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"delta\":\"1}\"}\n\n" +
		"data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c\",\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}\n\n",
	"data: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"model\":\"m\"}}\n\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"h\\u00e9\\ud83d\\ude00\\ud800\xff\"}\n\n" +
		"data: {\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":null,\"delta\":\"think\"}\n\ndata: {\"type\":\"response.reasoning_text.delta\",\"delta\":\"more\",\"sequence_number\":4}\n\n" +
		"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"hé\"}]}],\"usage\":{\"input_tokens\":1,\"output_tokens\":2,\"total_tokens\":3}}}\n\n",
	"data: {\"type\":\"response.output_text.delta\",\"delta\":\"a\",\"delta\":null,\"Delta\":\"b\",\"TYPE\":\"x\"}\n\ndata: {\"typ\\u0065\":\"response.output_text.delta\",\"delta\":\"c\"}\n\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":1.5,\"delta\":\"d\"}\n\n",
	"data: {\"type\":\"response.content_part.added\",\"part\":{\"type\":\"output_text\",\"text\":\"\"},\"delta\":5}\n\ndata: {\"type\":\"response.output_text.delta\",\"delta\":5}\n\n",
	"event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\"}\n\n",
	"data: {\"type\":\"error\",\"error\":{\"type\":\"insufficient_quota\",\"code\":429,\"message\":\"quota\"}}\n\ndata: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"x\",\"message\":\"y\"}}}\n\n",
	"data: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"output\":[]}}\n\n",
	"data: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\ndata: {\"error\":{\"message\":\"cut\"}}\n\ndata: more\n\n",
	"data: {\"type\":\"response.output_text.delta\",\"delta\":\"x\",\"item_id\":\"i\\\"1\",\"output_index\":-0}\n\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"y\",\"item_id\":\"i\\\"1\",\"output_index\":123456789012345678901}\n\n",
}

// FuzzResponsesStreamMatchesGoOpenAI holds the Responses API wire's
// reading of any stream to its reading through go-openai, word for word.
func FuzzResponsesStreamMatchesGoOpenAI(f *testing.F) {
	for _, fx := range streamFixtures(f) {
		if fx.responses {
			f.Add(seedOf(fx.body), true)
		}
	}
	for _, s := range responsesSeeds {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, sse bool) {
		ct := "application/json"
		if sse {
			ct = "text/event-stream"
		}
		sameStream(t, replayDoer{body: body, contentType: ct}, true)
	})
}

// TestLlamaCppCopiesMatchShared checks testdata/llamacpp against the shared
// fixture store it was copied from, where that store exists (not in CI).
func TestLlamaCppCopiesMatchShared(t *testing.T) {
	const shared = "../../shared/fixtures/llamacpp"
	if _, err := os.Stat(shared); err != nil {
		t.Skip("no shared fixture store at", shared)
	}
	copies, _ := filepath.Glob(filepath.Join("testdata", "llamacpp", "*.jsonl"))
	if len(copies) < 8 {
		t.Fatalf("%d copies", len(copies))
	}
	for _, c := range copies {
		want, err := os.ReadFile(filepath.Join(shared, filepath.Base(c)))
		got, _ := os.ReadFile(c)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from the store (%v)", c, err)
		}
	}
}
