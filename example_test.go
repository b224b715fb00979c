package onion_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// Weather reports the weather in a city.
//
// city: the city, e.g. Paris
//
//onion:intent read
func Weather(city string) (string, error) { return "sunny in " + city, nil }

// The README's quick start: a documented func is the whole tool.
func ExampleNewAgent() {
	agent, err := onion.NewAgent("assistant", Weather, onion.MaxIterations(5))
	if err != nil {
		log.Fatal(err)
	}
	// With a model configured: answer, err := agent.Input(ctx, "What's the weather in Paris?")
	for _, t := range agent.DescribeTools() {
		fmt.Println(t.Signature, "—", t.Description)
	}
	// Output: weather(city string) string — Reports the weather in a city.
}

// Calling tools without an LLM, exactly as the model path does.
func ExampleTool_Call() {
	agent, err := onion.NewAgent("assistant", Weather)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// snippet:call
	tool, _ := agent.Tools().Get("weather")
	text, err := tool.Call(ctx, `{"city":"Oslo"}`) // exactly what the model path does
	fmt.Println(text, err)
	value, err := tool.Run(ctx, map[string]any{"city": "Oslo"}) // the Go value
	fmt.Println(value, err)
	_, err = tool.Call(ctx, `{"town":"Oslo"}`) // every problem, and the parameters
	fmt.Println(err)
	// end snippet:call
	// Output:
	// sunny in Oslo <nil>
	// sunny in Oslo <nil>
	// invalid arguments for tool "weather":
	// - arguments: additional properties 'town' not allowed
	// - arguments: missing property 'city'
	// parameters: city (string, required)
}

// A struct instance's methods are tools sharing its state.
func ExampleToolsFrom() {
	tools, err := onion.ToolsFrom(&store{})
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name(), t.Intent())
	}
	// Output:
	// items read
	// put write
}

// Testing an agent with oniontest: the README's snippet.
func TestReadmeOniontest(t *testing.T) {
	ctx := context.Background()
	// snippet:oniontest
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	agent, _ := onion.NewAgent("t", Weather, onion.BaseURL(s.URL()), onion.APIKey("test"))
	answer, _ := agent.Input(ctx, "Weather in Paris?")
	// s.Requests() holds every request the agent sent.
	// end snippet:oniontest
	if answer != "It is sunny in Paris." || len(s.Requests()) != 2 {
		t.Errorf("answer %q after %d requests", answer, len(s.Requests()))
	}
	if msgs := s.Requests()[1].Body.Messages; msgs[len(msgs)-1].Content != "sunny in Paris" {
		t.Errorf("tool result sent back: %+v", msgs[len(msgs)-1])
	}
}
