package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/onionkit/onion"
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
