// Command hello is the README's quick start, as it is: a documented Go func
// is the whole tool. Point it at a model with OPENAI_API_KEY, or at a local
// OpenAI-compatible server with OPENAI_BASE_URL (and ONION_MODEL); without
// either it exits with status 1 and says so.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/onionkit/onion"
)

// snippet:quickstart

// Weather reports the weather in a city.
//
// city: the city, e.g. Paris
//
//onion:intent read
func Weather(city string) (string, error) { return "sunny in " + city, nil }

func main() {
	if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		log.Fatal("no model configured: set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL for a local OpenAI-compatible server (Ollama, vLLM), e.g. OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2")
	}
	agent, err := onion.NewAgent("assistant", Weather, onion.MaxIterations(5))
	if err != nil {
		log.Fatal(err)
	}
	answer, err := agent.Input(context.Background(), "What's the weather in Paris?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
}

// end snippet:quickstart
