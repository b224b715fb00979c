package oniontest_test

import (
	"context"
	"fmt"

	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
)

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
