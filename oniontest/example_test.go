package oniontest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
)

// GetWeather reports the weather in a city.
//
// city: the city, e.g. Paris
//
//onion:intent read
func GetWeather(city string) (string, error) { return "sunny in " + city, nil }

// TestWeather is the package doc's example, as it is.
//
// snippet:doc
func TestWeather(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	agent, err := onion.NewAgent("weather", GetWeather, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	answer, err := agent.Input(context.Background(), "Weather in Paris?")
	if err != nil || answer != "It is sunny in Paris." {
		t.Errorf("answer = %q, %v", answer, err)
	}
	reqs := s.Requests()
	if got := reqs[1].ToolResults(); len(got) != 1 || got[0].Content != "sunny in Paris" {
		t.Errorf("the tool result sent back: %+v", got)
	}
}

// end snippet:doc

// An agent against the server: the model asks for a tool, onion runs it and
// sends the result back, and the model answers.
func Example_agent() {
	s := oniontest.NewServer(nil, // in a test, pass its t: the server then closes itself
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	defer s.Close()
	agent, err := onion.NewAgent("weather", GetWeather, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := agent.Run(context.Background(), "Weather in Paris?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output)
	for _, c := range res.ToolCalls {
		fmt.Println(c.Name, c.Arguments, c.Outcome)
	}
	for _, m := range s.Requests()[1].ToolResults() {
		fmt.Println("sent back:", m.Content)
	}
	// Output:
	// It is sunny in Paris.
	// get_weather {"city":"Paris"} succeeded
	// sent back: sunny in Paris
}

func Example() {
	// In a test, pass its t instead of nil; the server then closes itself.
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	defer s.Close()
	client := s.Client()
	ctx := context.Background()

	req := openai.ChatCompletionRequest{
		Model:    "gpt-4.1",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Weather in Paris?"}},
	}
	resp, err := client.CreateChatCompletion(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	call := resp.Choices[0].Message.ToolCalls[0]
	fmt.Println(resp.Choices[0].FinishReason, call.ID, call.Function.Name, call.Function.Arguments)

	req.Messages = append(req.Messages, resp.Choices[0].Message, openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleTool, ToolCallID: call.ID, Content: "sunny, 24°C",
	})
	resp, err = client.CreateChatCompletion(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Choices[0].FinishReason, resp.Choices[0].Message.Content)
	fmt.Println(len(s.Requests()), "requests")
	// Output:
	// tool_calls call_1 get_weather {"city":"Paris"}
	// stop It is sunny in Paris.
	// 2 requests
}
