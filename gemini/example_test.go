package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/oniontest"
)

// An agent on a Gemini model, named by its provider's prefix: the key
// and the base URL come from the environment (here oniontest's Gemini
// wire stands in for the API).
func Example() {
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	defer s.Close()
	os.Setenv("GEMINI_BASE_URL", s.GeminiURL())
	defer os.Unsetenv("GEMINI_BASE_URL")

	agent, err := onion.NewAgent("weather", Weather, onion.Model("gemini/gemini-2.5-flash"))
	if err != nil {
		fmt.Println(err)
		return
	}
	answer, err := agent.Input(context.Background(), "Weather in Paris?")
	fmt.Println(answer, err)
	// Output: It is sunny in Paris. <nil>
}

// A Model with options of its own, given to an agent with WithModel.
func ExampleNew() {
	s := oniontest.NewServer(nil, oniontest.Text("Four."))
	defer s.Close()

	m, err := gemini.New("gemini-3-flash-preview",
		gemini.BaseURL(s.GeminiURL()), // the API's by default
		gemini.APIKey("test-key"),     // $GEMINI_API_KEY by default
		gemini.ThinkingLevel("low"),
		gemini.IncludeThoughts(),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	agent, err := onion.NewAgent("maths", onion.WithModel(m))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := agent.Run(context.Background(), "2+2?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output)
	// Output: Four.
}

// A tool whose schema Gemini cannot take is refused when the agent is
// made, with the tool and the keyword named.
func ExampleModel_CheckTools() {
	m, _ := gemini.New("gemini-2.5-flash", gemini.BaseURL("http://127.0.0.1:1"))
	tool, _ := onion.NewRawTool("either", []byte(`{"type":"object","allOf":[{"required":["a"]}]}`),
		func(context.Context, json.RawMessage) (any, error) { return "ok", nil })
	_, err := onion.NewAgent("strict", tool, onion.WithModel(m))
	fmt.Println(err)
	// Output: onion.NewAgent "strict": gemini: tool "either": parameters: keyword "allOf" (all of several schemas) has no form in the JSON Schema the Gemini API takes; remove it from the schema (the tool may check the rule itself)
}
