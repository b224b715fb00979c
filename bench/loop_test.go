package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

const loopPrompt = "Book two seats from Lisbon to Oslo on 24 December."

// script adds to s the replies of one run: the model asks for book_flight,
// then answers.
func script(s *oniontest.Server) {
	s.Add(
		oniontest.ToolCalls(oniontest.Call("book_flight", FlightJSON)),
		oniontest.Text("Booked: LISOSL2026-12-24, 2 seats."),
	)
}

// byHand is what BenchmarkLoop's baseline does: the two requests onion's
// loop sends, byte for byte, made with the go-openai client, and the tool
// called in between with encoding/json.
func byHand(ctx context.Context, client *openai.Client, def openai.Tool) (string, error) {
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You book flights.\n\n" + loop.SafetyNote},
		{Role: openai.ChatMessageRoleUser, Content: loopPrompt},
	}
	req := openai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs, Tools: []openai.Tool{def}, ToolChoice: "auto"}
	resp, err := client.CreateChatCompletion(ctx, req)
	if err != nil {
		return "", err
	}
	reply := resp.Choices[0].Message
	req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: reply.Role, ToolCalls: reply.ToolCalls})
	for _, c := range reply.ToolCalls {
		var args FlightArgs
		if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
			return "", err
		}
		res, err := BookFlight(ctx, args)
		if err != nil {
			return "", err
		}
		out, err := json.Marshal(res)
		if err != nil {
			return "", err
		}
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleTool, ToolCallID: c.ID, Name: c.Function.Name, Content: string(out),
		})
	}
	resp, err = client.CreateChatCompletion(ctx, req)
	if err != nil {
		return "", err
	}
	return resp.Choices[0].Message.Content, nil
}

// loopAgent is BenchmarkLoop's agent on s.
func loopAgent(tb testing.TB, s *oniontest.Server) *onion.Agent {
	agent, err := onion.NewAgent("bench", BookFlight,
		onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.SystemPrompt("You book flights."))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { agent.Close() })
	return agent
}

// TestLoopBaselineIsTheSameTraffic: the baseline of BenchmarkLoop sends
// what the agent sends, byte for byte, so that the ratio is onion's own
// cost.
func TestLoopBaselineIsTheSameTraffic(t *testing.T) {
	ctx := context.Background()
	tool, err := onion.NewTool(BookFlight)
	if err != nil {
		t.Fatal(err)
	}
	hand := oniontest.NewServer(t)
	script(hand)
	if _, err := byHand(ctx, hand.Client(), tool.Definition()); err != nil {
		t.Fatal(err)
	}
	agent := oniontest.NewServer(t)
	script(agent)
	if _, err := loopAgent(t, agent).Run(ctx, loopPrompt); err != nil {
		t.Fatal(err)
	}
	a, b := hand.Requests(), agent.Requests()
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("%d and %d requests", len(a), len(b))
	}
	for i := range a {
		if string(a[i].Raw) != string(b[i].Raw) {
			t.Errorf("request %d differs:\nby hand %s\nagent   %s", i, a[i].Raw, b[i].Raw)
		}
	}
}

// BenchmarkLoop measures one run of the loop in which the model asks for
// one tool and then answers: two Chat Completions requests to an oniontest
// server on loopback and one tool call. The baseline makes the same two
// requests, byte for byte, with the go-openai client and calls the func by
// hand, so the difference is what onion's loop adds per run.
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
			out, err := byHand(ctx, client, def)
			if err != nil {
				b.Fatal(err)
			}
			sink = out
		}
	})
	b.Run("onion", func(b *testing.B) {
		s := oniontest.NewServer(b)
		agent := loopAgent(b, s)
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			script(s)
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
		l := drive.Loop(agent)
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
