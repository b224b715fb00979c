package onion_test

import (
	"context"
	"fmt"
	"log"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// An agent on the Responses API, here against oniontest, which serves
// /v1/responses from the same steps as Chat Completions.
func ExampleResponsesAPI() {
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	defer s.Close()
	agent, err := onion.NewAgent("assistant", Weather, onion.ResponsesAPI(),
		onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		log.Fatal(err)
	}
	answer, err := agent.Input(context.Background(), "Weather in Paris?")
	fmt.Println(answer, err)

	// The second request carried the call back as it came, then its result.
	second := s.Requests()[1].Responses
	for _, item := range second.Input {
		fmt.Printf("%s %q %q\n", item.Type, item.CallID, item.Output)
	}
	fmt.Println("store:", *second.Store, "include:", second.Include)
	// Output:
	// It is sunny in Paris. <nil>
	// message "" ""
	// function_call "call_1" ""
	// function_call_output "call_1" "sunny in Paris"
	// store: false include: [reasoning.encrypted_content]
}

// With ChainResponses the server keeps the conversation: the second
// request names the first response and carries only the tool result.
func ExampleChainResponses() {
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	defer s.Close()
	agent, err := onion.NewAgent("assistant", Weather, onion.ChainResponses(),
		onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		log.Fatal(err)
	}
	answer, err := agent.Input(context.Background(), "Weather in Paris?")
	fmt.Println(answer, err)

	second := s.Requests()[1].Responses
	fmt.Println("previous_response_id:", second.PreviousResponseID, "store:", *second.Store)
	for _, item := range second.Input {
		fmt.Println(item.Type, item.CallID, item.Output)
	}
	// Output:
	// It is sunny in Paris. <nil>
	// previous_response_id: resp_oniontest_1 store: true
	// function_call_output call_1 sunny in Paris
}
