package anthropic_test

import (
	"context"
	"fmt"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// An agent on a Claude model. Here the model is oniontest's Messages API;
// without BaseURL and APIKey, New reads ANTHROPIC_API_KEY and sends to
// api.anthropic.com. Importing the package also lets an agent name its
// model: onion.Model("anthropic/claude-sonnet-4-5").
func ExampleNew() {
	s := oniontest.NewServer(nil, oniontest.Text("Paris."))
	defer s.Close()

	// snippet:new
	m, err := anthropic.New("claude-sonnet-4-5", anthropic.BaseURL(s.AnthropicURL()), anthropic.APIKey("sk-ant-example"))
	if err != nil {
		panic(err)
	}
	agent, err := onion.NewAgent("geo", onion.WithModel(m), onion.SystemPrompt("Answer in one word."))
	// end snippet:new
	if err != nil {
		panic(err)
	}
	answer, err := agent.Input(context.Background(), "Capital of France?")
	if err != nil {
		panic(err)
	}
	fmt.Println(answer)
	// Output: Paris.
}

// Extended thinking: the model's thinking streams as reasoning, and its
// signed block is kept in the reply's Items to be sent back with the turn.
func ExampleThinking() {
	s := oniontest.NewServer(nil, oniontest.Text("42.").WithThinking("Six times seven."))
	defer s.Close()

	m, err := anthropic.New("claude-sonnet-4-5", anthropic.BaseURL(s.AnthropicURL()), anthropic.Thinking(2048))
	if err != nil {
		panic(err)
	}
	req := &loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "6 × 7?"}}}
	resp, err := m.Generate(context.Background(), req, func(d loop.Delta) {
		if d.Reasoning != "" {
			fmt.Printf("thinking: %q\n", d.Reasoning)
		}
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Message.Content, resp.Message.ItemsFrom)
	// Output:
	// thinking: "Six"
	// thinking: " times"
	// thinking: " seven."
	// 42. anthropic
}
