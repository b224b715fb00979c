// Quickstart shows the whole idea of onion: two documented Go funcs become
// tools a model can call, with their JSON Schemas derived from the Go source.
//
// Without OPENAI_API_KEY or OPENAI_BASE_URL it needs no model: it prints each
// tool's schema, calls the tools directly and says how to point it at one.
//
//	go run ./examples/quickstart
//
// With an OpenAI key, or a local OpenAI-compatible server such as Ollama or
// vLLM, it asks an agent a question that needs both tools and prints the answer:
//
//	OPENAI_API_KEY=sk-... go run ./examples/quickstart
//	OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2 go run ./examples/quickstart
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/onionkit/onion"
)

// question is what the agent is asked when a model is configured.
const question = "How much warmer is it in Lisbon than in Oslo right now, in °C?"

var temperatures = map[string]float64{
	"lisbon": 21.5,
	"oslo":   4,
	"paris":  14,
	"tokyo":  18.5,
}

// GetWeather returns the current temperature of a city in degrees Celsius.
//
// city: the city's English name, such as "Paris"
//
//onion:intent read
func GetWeather(city string) (float64, error) {
	t, ok := temperatures[strings.ToLower(strings.TrimSpace(city))]
	if !ok {
		return 0, fmt.Errorf("no weather for %q: known cities are Lisbon, Oslo, Paris and Tokyo", city)
	}
	return t, nil
}

// Subtract returns a minus b. Use it for any difference instead of working
// it out yourself.
//
// a: the number to subtract from
// b: the number to subtract
//
//onion:intent read
func Subtract(a, b float64) float64 {
	return a - b
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run is the program, with its output passed in so that a test can run it
// against oniontest.
func run(ctx context.Context, out io.Writer) error {
	// NewAgent reads OPENAI_API_KEY, OPENAI_BASE_URL and ONION_MODEL itself.
	agent, err := onion.NewAgent("quickstart", GetWeather, Subtract,
		onion.SystemPrompt("Answer with the tools; never guess a temperature."))
	if err != nil {
		return err
	}
	defer agent.Close()

	if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		return withoutModel(ctx, out, agent)
	}
	answer, err := agent.Input(ctx, question)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Q: %s\nA: %s\n", question, answer)
	return nil
}

// withoutModel shows what the model would be given, and uses the tools the
// way the model would, without pretending to be one.
func withoutModel(ctx context.Context, out io.Writer, agent *onion.Agent) error {
	for _, t := range agent.Tools().All() {
		def, err := json.MarshalIndent(t.Definition(), "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "tool %s:\n%s\n\n", t.Signature(), def)
	}
	calls := []struct{ tool, args string }{
		{"get_weather", `{"city":"Lisbon"}`},
		{"get_weather", `{"city":"Oslo"}`},
		{"subtract", `{"a":21.5,"b":4}`},
		{"get_weather", `{"city":"Atlantis"}`},
	}
	for _, c := range calls {
		t, _ := agent.Tools().Get(c.tool)
		res, err := t.Call(ctx, c.args)
		if err != nil {
			res = "error: " + err.Error()
		}
		fmt.Fprintf(out, "%s(%s) -> %s\n", c.tool, c.args, res)
	}
	fmt.Fprintln(out, "\nNo model configured: set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL for a local OpenAI-compatible server (Ollama, vLLM), e.g. OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2 go run ./examples/quickstart")
	return nil
}
