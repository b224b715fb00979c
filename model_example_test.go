package onion_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/onionkit/onion"
)

// snippet:model
// echoModel is a user-written model: it calls the weather tool for the
// city in the prompt, then answers with what the tool said.
type echoModel struct{}

func (echoModel) Generate(_ context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == onion.RoleTool {
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: "The tool says: " + last.Content}}, nil
	}
	city := last.Content[strings.LastIndex(last.Content, " ")+1:]
	call := onion.ToolRequest{ID: "call_1", Name: "weather", Arguments: fmt.Sprintf(`{"city":%q}`, city)}
	return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, ToolCalls: []onion.ToolRequest{call}}}, nil
}

// end snippet:model

// Any model behind the LanguageModel interface: one method, onion's own
// request and response types.
func ExampleWithModel() {
	// snippet:withmodel
	agent, err := onion.NewAgent("assistant", Weather, onion.WithModel(echoModel{}))
	// end snippet:withmodel
	if err != nil {
		log.Fatal(err)
	}
	res, err := agent.Run(context.Background(), "Weather in Paris")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
	fmt.Println(res.ToolCalls[0].Name, res.ToolCalls[0].Outcome)
	// Output:
	// The tool says: sunny in Paris
	// weather succeeded
}
