// Command firstten is the README's first ten minutes, as it is: a
// documented Go func becomes a tool, is called directly as a model would
// call it, then runs with a model, once and in a conversation. Point it at
// a model with OPENAI_API_KEY, or at a local OpenAI-compatible server with
// OPENAI_BASE_URL (and ONION_MODEL); without either, the direct call still
// works and the run says what to set.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/onionkit/onion"
)

// snippet:firstten

// Weather reports the weather in a city.
//
// city: the city, e.g. Paris
//
//onion:intent read
func Weather(city string) (string, error) { return "sunny in " + city, nil }

func main() {
	ctx := context.Background()
	// 1. A documented func is a tool: its schema comes from the types and the doc comment.
	agent, err := onion.NewAgent("assistant", Weather)
	if err != nil {
		log.Fatal(err)
	}
	// 2. Call it directly, exactly as the model's calls run: no model needed.
	tool, _ := agent.Tools().Get("weather")
	out, err := tool.Call(ctx, `{"city":"Oslo"}`)
	fmt.Println(out, err) // sunny in Oslo <nil>

	// 3. Run it with a model (OPENAI_API_KEY, or OPENAI_BASE_URL for a local server).
	answer, err := agent.Input(ctx, "What's the weather in Paris?")
	if err != nil {
		log.Fatal(err) // with no model: what to set
	}
	fmt.Println(answer)

	// 4. A conversation keeps the turns.
	conv := agent.NewConversation()
	if _, err := conv.Input(ctx, "What's the weather in Rome?"); err != nil {
		log.Fatal(err)
	}
	answer, err = conv.Input(ctx, "And the day after?") // the model reads the first turn too
	fmt.Println(answer, err)
}

// end snippet:firstten
