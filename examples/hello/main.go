// Command hello is the README's quick start, as it is: a documented Go func
// is the whole tool. Point it at a model with OPENAI_API_KEY, or at a local
// OpenAI-compatible server with OPENAI_BASE_URL (and ONION_MODEL); without
// either its run fails before any request with onion.ErrNoModel, which says
// what to set, and it exits with status 1.
package main

import (
	"context"
	"fmt"
	"log"

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
