package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/openai"
)

// BenchmarkStreamDeltas measures what a streamed reply costs per delta:
// one op is one delta of 4 bytes (the text "abcd", or 4 bytes of a tool
// call's arguments), each a chunk or event as OpenAI sends it, so that
// -benchtime 262144x is a reply of 1 MiB (more deltas than that are read
// as several replies of at most 1 MiB). The stream is made as it is read
// (no network): a head, the same delta chunk b.N times, and the end of the
// stream, which on the Responses API repeats the whole text or arguments
// in its .done events and in response.completed, as OpenAI's does.
//
// For each wire and kind, three readers of the same bytes:
//   - baseline: bufio.Scanner over the lines, json.Unmarshal of each data
//     line into a struct of the fields read, the deltas appended;
//   - go_openai: go-openai v1.43.0's own stream, Recv into its types;
//   - onion: openai.Model.Generate with an onDelta.
//
// Each reports ns/delta, B/delta and allocs/delta; after the three, the
// benchmark logs onion's figures and their ratio to the baseline's.
func BenchmarkStreamDeltas(b *testing.B) {
	for _, c := range streamCases {
		b.Run(c.name, func(b *testing.B) {
			got := map[string]deltaCost{}
			for _, reader := range []string{"baseline", "go_openai", "onion"} {
				b.Run(reader, func(b *testing.B) {
					got[reader] = measureDeltas(b, c, reader)
				})
			}
			base, on := got["baseline"], got["onion"]
			if base.n > 0 && on.n > 0 {
				b.Logf("%s: onion %.0f ns, %.1f B, %.2f allocs a delta; %.2f×, %.2f×, %.2f× the baseline's (%.0f ns, %.1f B, %.2f allocs)",
					c.name, on.ns, on.bytes, on.allocs, on.ns/base.ns, on.bytes/base.bytes, on.allocs/base.allocs, base.ns, base.bytes, base.allocs)
			}
		})
	}
}

// streamCase is one wire and kind of delta.
type streamCase struct {
	name      string
	responses bool // the Responses API, else Chat Completions
	args      bool // a tool call's arguments, else text
}

var streamCases = []streamCase{
	{"chat_text", false, false},
	{"chat_args", false, true},
	{"responses_text", true, false},
	{"responses_args", true, true},
}

// deltaCost is what one delta cost.
type deltaCost struct {
	n                 int
	ns, bytes, allocs float64
}

// perStream is the most deltas one stream holds: 1 MiB of text or
// arguments, some 80 MB of OpenAI's framing, within the bound a wire puts
// on a stream (loop.MaxStreamBytes). More deltas are read as more streams.
const perStream = 1 << 18

// measureDeltas reads b.N deltas of c with reader, in streams of at most
// perStream, and reports the cost per delta.
func measureDeltas(b *testing.B, c streamCase, reader string) deltaCost {
	var streams []*deltaStream
	for left := b.N; left > 0; left -= perStream {
		streams = append(streams, newDeltaStream(c, min(left, perStream)))
	}
	read := map[string]func(*deltaStream) (int, error){
		"baseline": readBaseline, "go_openai": readGoOpenAI, "onion": readOnion,
	}[reader]
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	start := time.Now()
	n := 0
	var err error
	for _, s := range streams {
		var k int
		if k, err = read(s); err != nil {
			break
		}
		n += k
	}
	took := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	if err != nil {
		b.Fatal(err)
	}
	if want := 4 * b.N; n != want {
		b.Fatalf("%s read %d bytes of deltas, want %d", reader, n, want)
	}
	cost := deltaCost{n: b.N, ns: float64(took.Nanoseconds()) / float64(b.N),
		bytes:  float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N),
		allocs: float64(after.Mallocs-before.Mallocs) / float64(b.N)}
	b.ReportMetric(cost.ns, "ns/delta")
	b.ReportMetric(cost.bytes, "B/delta")
	b.ReportMetric(cost.allocs, "allocs/delta")
	return cost
}

// The chunks of the streams, as OpenAI sends them (ids and fingerprints
// of real lengths, OpenAI's obfuscation padding on Responses events).
const (
	chatChunkHead = `data: {"id":"chatcmpl-C3x9q2aVnW8rT5yLm0bKpJ4dF6sHe","object":"chat.completion.chunk","created":1761840000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_560af6e559","choices":[{"index":0,"delta":`
	respEventHead = "event: %[1]s\ndata: {\"type\":\"%[1]s\",\"sequence_number\":7,\"item_id\":\"%[2]s\",\"output_index\":0,"
	respMsgID     = "msg_0ecff685e411ca7b0069e0635745e0819b8f6e1c5c2a40d3b1"
	respCallID    = "fc_0ecff685e411ca7b0069e0635745e0819b8f6e1c5c2a40d3b2"
)

// chatChunkTail ends a chunk whose choice finishes for reason (JSON).
func chatChunkTail(reason string) string {
	return `,"logprobs":null,"finish_reason":` + reason + `}],"usage":null,"obfuscation":"k3Xv"}` + "\n\n"
}

// deltaStream is a stream of n deltas, made as it is read from pieces,
// each repeated so many times: setting one up costs the same whatever n.
type deltaStream struct {
	c      streamCase
	pieces []piece
	cur    []byte
}

type piece struct {
	b     []byte
	times int
}

// add appends the pieces of text to s: each "%s" in it stands for the
// text or arguments of the whole reply, "abcd" n times.
func (s *deltaStream) add(text string, n int) {
	parts := strings.Split(text, "%s")
	for i, p := range parts {
		if i > 0 {
			s.pieces = append(s.pieces, piece{[]byte("abcd"), n})
		}
		s.pieces = append(s.pieces, piece{[]byte(p), 1})
	}
}

func newDeltaStream(c streamCase, n int) *deltaStream {
	s := &deltaStream{c: c}
	if !c.responses {
		call := ""
		if c.args {
			call = `"tool_calls":[{"index":0,"id":"call_kL0PCQV7M2WMoVX8V8OtYSAL","type":"function","function":{"name":"save_note","arguments":""}}],`
		}
		s.add(chatChunkHead+`{"role":"assistant","content":`+map[bool]string{true: "null", false: `""`}[c.args]+`,`+call+`"refusal":null}`+chatChunkTail(`null`), 1)
		delta := `{"content":"abcd"}`
		if c.args {
			delta = `{"tool_calls":[{"index":0,"function":{"arguments":"abcd"}}]}`
		}
		s.pieces = append(s.pieces, piece{[]byte(chatChunkHead + delta + chatChunkTail(`null`)), n})
		s.add(chatChunkHead+`{}`+chatChunkTail(map[bool]string{true: `"tool_calls"`, false: `"stop"`}[c.args]), 1)
		s.add(`data: {"id":"chatcmpl-C3x9q2aVnW8rT5yLm0bKpJ4dF6sHe","object":"chat.completion.chunk","created":1761840000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_560af6e559","choices":[],"usage":{"prompt_tokens":52,"completion_tokens":`+fmt.Sprint(n)+`,"total_tokens":`+fmt.Sprint(n+52)+`,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"Qe"}`+"\n\ndata: [DONE]\n\n", n)
		return s
	}
	usage := `{"input_tokens":52,"input_tokens_details":{"cached_tokens":0},"output_tokens":` + fmt.Sprint(n) + `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":` + fmt.Sprint(n+52) + `}`
	response := func(status, output, usage string) string {
		return `{"id":"resp_0ecff685e411ca7b0069e063569c7c819bbc74c80d853802e6","object":"response","created_at":1776313174,"status":"` + status + `","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"gpt-4o-mini-2024-07-18","output":[` + output + `],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"service_tier":"default","store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":` + usage + `,"user":null,"metadata":{}}`
	}
	event := func(typ, data string) {
		s.add("event: "+typ+"\ndata: "+data+"\n\n", n)
	}
	item := `{"id":"` + respMsgID + `","type":"message","status":"in_progress","content":[],"role":"assistant"}`
	itemDone := `{"id":"` + respMsgID + `","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"%s"}],"role":"assistant"}`
	delta := fmt.Sprintf(respEventHead+`"content_index":0,"delta":"abcd","logprobs":[],"obfuscation":"Xk3vQe9a2Lm0"}`+"\n\n", "response.output_text.delta", respMsgID)
	if c.args {
		item = `{"id":"` + respCallID + `","type":"function_call","status":"in_progress","arguments":"","call_id":"call_kL0PCQV7M2WMoVX8V8OtYSAL","name":"save_note"}`
		itemDone = `{"id":"` + respCallID + `","type":"function_call","status":"completed","arguments":"%s","call_id":"call_kL0PCQV7M2WMoVX8V8OtYSAL","name":"save_note"}`
		delta = fmt.Sprintf(respEventHead+`"delta":"abcd","obfuscation":"Xk3vQe9a2Lm0"}`+"\n\n", "response.function_call_arguments.delta", respCallID)
	}
	event("response.created", `{"type":"response.created","sequence_number":0,"response":`+response("in_progress", "", "null")+`}`)
	event("response.in_progress", `{"type":"response.in_progress","sequence_number":1,"response":`+response("in_progress", "", "null")+`}`)
	event("response.output_item.added", `{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":`+item+`}`)
	if !c.args {
		event("response.content_part.added", `{"type":"response.content_part.added","sequence_number":3,"item_id":"`+respMsgID+`","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}`)
	}
	s.pieces = append(s.pieces, piece{[]byte(delta), n})
	if c.args {
		event("response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","sequence_number":8,"item_id":"`+respCallID+`","output_index":0,"arguments":"%s"}`)
	} else {
		event("response.output_text.done", `{"type":"response.output_text.done","sequence_number":8,"item_id":"`+respMsgID+`","output_index":0,"content_index":0,"text":"%s","logprobs":[]}`)
		event("response.content_part.done", `{"type":"response.content_part.done","sequence_number":9,"item_id":"`+respMsgID+`","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"%s"}}`)
	}
	event("response.output_item.done", `{"type":"response.output_item.done","sequence_number":10,"output_index":0,"item":`+itemDone+`}`)
	event("response.completed", `{"type":"response.completed","sequence_number":11,"response":`+response("completed", itemDone, usage)+`}`)
	return s
}

func (s *deltaStream) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if len(s.cur) == 0 {
			if len(s.pieces) == 0 {
				if total == 0 {
					return 0, io.EOF
				}
				return total, nil
			}
			next := &s.pieces[0]
			s.cur = next.b
			if next.times--; next.times <= 0 {
				s.pieces = s.pieces[1:]
			}
		}
		k := copy(p, s.cur)
		s.cur, p, total = s.cur[k:], p[k:], total+k
	}
	return total, nil
}

// streamDoer answers a request with the stream s, once.
type streamDoer struct {
	s    *deltaStream
	once sync.Once
}

func (d *streamDoer) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	var body io.Reader = strings.NewReader("")
	d.once.Do(func() { body = d.s })
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Request: req,
		Header: http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, Body: io.NopCloser(body)}, nil
}

func streamClient(s *deltaStream) *goopenai.Client {
	cfg := goopenai.DefaultConfig("test-key")
	cfg.BaseURL = "http://stream.test/v1"
	cfg.HTTPClient = &streamDoer{s: s}
	return goopenai.NewClientWithConfig(cfg)
}

// readOnion reads s with onion's model; n is the bytes of text or
// arguments it made of it.
func readOnion(s *deltaStream) (int, error) {
	opts := []openai.Option{openai.WithClient(streamClient(s))}
	if s.c.responses {
		opts = append(opts, openai.ResponsesAPI())
	}
	m, err := openai.New(opts...)
	if err != nil {
		return 0, err
	}
	req := &loop.Request{Model: "gpt-4o-mini", Messages: []loop.Message{{Role: loop.RoleUser, Content: "Write it down."}}}
	deltas := 0
	resp, err := m.Generate(context.Background(), req, func(d loop.Delta) { deltas += len(d.Text) })
	if err != nil {
		return 0, err
	}
	if s.c.args {
		if len(resp.Message.ToolCalls) != 1 {
			return 0, fmt.Errorf("%d tool calls", len(resp.Message.ToolCalls))
		}
		return len(resp.Message.ToolCalls[0].Arguments), nil
	}
	if deltas != len(resp.Message.Content) {
		return 0, fmt.Errorf("%d bytes of deltas, %d of content", deltas, len(resp.Message.Content))
	}
	return deltas, nil
}

// readGoOpenAI reads s with go-openai's stream, as its users do.
func readGoOpenAI(s *deltaStream) (int, error) {
	client := streamClient(s)
	var out strings.Builder
	if s.c.responses {
		stream, err := client.CreateResponseStream(context.Background(), goopenai.CreateResponseRequest{Model: "gpt-4o-mini", Input: "Write it down."})
		if err != nil {
			return 0, err
		}
		defer stream.Close()
		for {
			ev, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return out.Len(), nil
			}
			if err != nil {
				return 0, err
			}
			if ev.Type == "response.output_text.delta" || ev.Type == "response.function_call_arguments.delta" {
				out.WriteString(ev.Delta)
			}
		}
	}
	stream, err := client.CreateChatCompletionStream(context.Background(), goopenai.ChatCompletionRequest{Model: "gpt-4o-mini",
		Messages: []goopenai.ChatCompletionMessage{{Role: "user", Content: "Write it down."}}})
	if err != nil {
		return 0, err
	}
	defer stream.Close()
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out.Len(), nil
		}
		if err != nil {
			return 0, err
		}
		for _, ch := range chunk.Choices {
			out.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				out.WriteString(tc.Function.Arguments)
			}
		}
	}
}

// readBaseline reads s as the least a hand-written client does: its lines
// with a bufio.Scanner, each data line decoded with json.Unmarshal into a
// struct of the fields read.
func readBaseline(s *deltaStream) (int, error) {
	sc := bufio.NewScanner(s)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var out strings.Builder
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok || string(data) == "[DONE]" {
			continue
		}
		if s.c.responses {
			var ev struct {
				Type  string `json:"type"`
				Delta string `json:"delta"`
			}
			if err := json.Unmarshal(data, &ev); err != nil {
				return 0, err
			}
			if ev.Type == "response.output_text.delta" || ev.Type == "response.function_call_arguments.delta" {
				out.WriteString(ev.Delta)
			}
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Function struct {
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return 0, err
		}
		for _, ch := range chunk.Choices {
			out.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				out.WriteString(tc.Function.Arguments)
			}
		}
	}
	return out.Len(), sc.Err()
}
