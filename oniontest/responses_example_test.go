package oniontest_test

import (
	"context"
	"fmt"

	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
)

// The same steps serve the Responses API: a tool call is a function_call
// item, and the request is recorded both as sent and in Chat Completions
// terms.
func Example_responses() {
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	defer s.Close()
	client := s.Client()
	ctx := context.Background()

	input := []any{openai.ResponseInputMessage{Role: "user", Content: "Weather in Paris?"}}
	resp, err := client.CreateResponse(ctx, openai.CreateResponseRequest{Model: "gpt-5", Input: input})
	if err != nil {
		fmt.Println(err)
		return
	}
	call := resp.Output[0].(map[string]any)
	fmt.Println(call["type"], call["call_id"], call["name"], call["arguments"])

	input = append(input, call, openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: "call_1", Output: "sunny, 24°C"})
	resp, err = client.CreateResponse(ctx, openai.CreateResponseRequest{Model: "gpt-5", Input: input})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, resp.GetOutputText())
	results := s.Requests()[1].ToolResults()
	fmt.Println(results[0].ToolCallID, results[0].Name, results[0].Content)
	// Output:
	// function_call call_1 get_weather {"city":"Paris"}
	// completed It is sunny in Paris.
	// call_1 get_weather sunny, 24°C
}
