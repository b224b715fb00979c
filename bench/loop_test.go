package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

const loopPrompt = "Book two seats from Lisbon to Oslo on 24 December."

// script adds to s the replies of one run: the model asks for book_flight,
// then answers.
func script(s *oniontest.Server) {
	s.Add(
		oniontest.ToolCalls(oniontest.Call("book_flight", flightJSON)),
		oniontest.Text("Booked: LISOSL2026-12-24, 2 seats."),
	)
}

// BenchmarkLoop measures one run of the loop in which the model asks for
// one tool and then answers: two Chat Completions requests to an oniontest
// server on loopback and one tool call. The baseline makes the same two
// requests with the go-openai client and calls the func by hand, so the
// difference is what onion's loop adds per run.
func BenchmarkLoop(b *testing.B) {
	ctx := context.Background()
	b.Run("baseline", func(b *testing.B) {
		s := oniontest.NewServer(b)
		client := s.Client()
		tool, err := onion.NewTool(BookFlight)
		if err != nil {
			b.Fatal(err)
		}
		def := tool.Definition() // the same tool definition is sent
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			script(s)
			b.StartTimer()
			msgs := []openai.ChatCompletionMessage{
				{Role: openai.ChatMessageRoleSystem, Content: "You book flights."},
				{Role: openai.ChatMessageRoleUser, Content: loopPrompt},
			}
			req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs, Tools: []openai.Tool{def}}
			resp, err := client.CreateChatCompletion(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			reply := resp.Choices[0].Message
			req.Messages = append(req.Messages, reply)
			for _, c := range reply.ToolCalls {
				var args FlightArgs
				if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
					b.Fatal(err)
				}
				res, err := BookFlight(ctx, args)
				if err != nil {
					b.Fatal(err)
				}
				out, err := json.Marshal(res)
				if err != nil {
					b.Fatal(err)
				}
				req.Messages = append(req.Messages, openai.ChatCompletionMessage{
					Role: openai.ChatMessageRoleTool, ToolCallID: c.ID, Content: string(out),
				})
			}
			resp, err = client.CreateChatCompletion(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			sink = resp.Choices[0].Message.Content
		}
	})
	b.Run("onion", func(b *testing.B) {
		s := oniontest.NewServer(b)
		agent, err := onion.NewAgent("bench", BookFlight,
			onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.SystemPrompt("You book flights."))
		if err != nil {
			b.Fatal(err)
		}
		defer agent.Close()
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			script(s)
			agent.Reset() // every run starts from the same conversation
			b.StartTimer()
			res, err := agent.Run(ctx, loopPrompt)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded {
				b.Fatalf("tool calls: %+v", res.ToolCalls)
			}
			sink = res.Output
		}
	})
}

// tenCalls is a Chat Completions response asking for ten tool calls, as a
// server sends it.
func tenCalls() []byte {
	var calls []string
	for i := range 10 {
		calls = append(calls, fmt.Sprintf(`{"id":"call_%02d","type":"function","function":{"name":"lookup","arguments":"{\"key\":\"k%d\"}"}}`, i, i))
	}
	return []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1764576000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		strings.Join(calls, ",") + `]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":120,"completion_tokens":80,"total_tokens":200}}`)
}

// BenchmarkStep measures the loop's core taking a response of ten read
// calls (Step with the reply: the calls checked, the first batch
// scheduled, its effects returned), against decoding the JSON of that
// same response with go-openai's types, which every runtime does first.
func BenchmarkStep(b *testing.B) {
	body := tenCalls()
	b.Run("decode_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var resp openai.ChatCompletionResponse
			if err := json.Unmarshal(body, &resp); err != nil {
				b.Fatal(err)
			}
			sink = resp.ID
		}
	})
	b.Run("step", func(b *testing.B) {
		tool, err := onion.NewTool(Lookup, onion.Read)
		if err != nil {
			b.Fatal(err)
		}
		agent, err := onion.NewAgent("bench", tool, onion.APIKey("test-key"))
		if err != nil {
			b.Fatal(err)
		}
		var resp openai.ChatCompletionResponse
		if err := json.Unmarshal(body, &resp); err != nil {
			b.Fatal(err)
		}
		reply := &onion.Response{ID: resp.ID, Message: onion.Message{Role: onion.RoleAssistant}}
		for _, c := range resp.Choices[0].Message.ToolCalls {
			reply.Message.ToolCalls = append(reply.Message.ToolCalls, onion.ToolRequest{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		l := agent.Loop()
		now := time.Now()
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			st, _ := l.Start("run", 1, nil, loopPrompt)
			b.StartTimer()
			effects, err := l.Step(st, loop.Input{Now: now, Reply: reply})
			if err != nil || len(effects) != 16 { // 8 reads started (MaxParallel), each an event and a RunCall
				b.Fatalf("%d effects, err %v", len(effects), err)
			}
		}
	})
}
