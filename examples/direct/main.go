// Direct shows that onion tools are plain Go you can call without a model:
// look a tool up by name, call it with the JSON a model would send, run it
// with a Go map, see the error a model would read for bad arguments, and
// list the tools for people. No API key or server is needed.
//
//	go run ./examples/direct
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/onionkit/onion"
)

// ConvertArgs are the parameters of Convert.
type ConvertArgs struct {
	// Amount is the sum of money to convert.
	Amount float64 `json:"amount" jsonschema:"minimum=0"`
	// From is the currency the amount is in.
	From string `json:"from" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	// To is the currency to convert to.
	To string `json:"to" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
	// Decimals is how many decimals to round to.
	Decimals int `json:"decimals,omitempty" jsonschema:"minimum=0,maximum=4"`
}

// rates are the value of one unit of each currency in euros.
var rates = map[string]float64{"EUR": 1, "USD": 0.92, "GBP": 1.17}

// Convert converts an amount of money between currencies at fixed rates.
//
//onion:intent read
func Convert(args ConvertArgs) (string, error) {
	from, ok := rates[args.From]
	if !ok {
		return "", fmt.Errorf("unknown currency %q", args.From)
	}
	to, ok := rates[args.To]
	if !ok {
		return "", fmt.Errorf("unknown currency %q", args.To)
	}
	return fmt.Sprintf("%.*f %s", args.Decimals, args.Amount*from/to, args.To), nil
}

// WordCount counts the words of a text, optionally only those longer than a
// minimum length.
//
// text: the text to count the words of
// minLen: count only words with at least this many letters (0 counts all)
//
//onion:intent read
func WordCount(text string, minLen int) int {
	n := 0
	for _, w := range strings.Fields(text) {
		if len([]rune(w)) >= minLen {
			n++
		}
	}
	return n
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "direct:", err)
		os.Exit(1)
	}
}

// run is the program, with its output passed in so that a test can check it.
func run(ctx context.Context, out io.Writer) error {
	agent, err := onion.NewAgent("direct", Convert, WordCount)
	if err != nil {
		return err
	}
	defer agent.Close()

	fmt.Fprintln(out, "Tools:")
	for _, info := range agent.DescribeTools() {
		fmt.Fprintf(out, "  %s\n      %s\n", info.Signature, info.Description)
	}

	convert, ok := agent.Tools().Get("convert")
	if !ok {
		return errors.New("no convert tool")
	}
	// Call takes the model's JSON and returns the text the model would read.
	text, err := convert.Call(ctx, `{"amount":100,"from":"USD","to":"EUR","decimals":2}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nconvert.Call: %s\n", text)

	// Run takes Go values and returns the Go result.
	count, _ := agent.Tools().Get("word_count")
	n, err := count.Run(ctx, map[string]any{"text": "the quick brown fox jumps over the lazy dog", "minLen": 4})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "word_count.Run: %v (%T)\n", n, n)

	// Arguments that do not fit are refused before the func runs, with the
	// text a model would read to correct itself.
	_, err = convert.Call(ctx, `{"amount":-5,"from":"JPY","decimals":"two"}`)
	var argErr *onion.ArgumentError
	if !errors.As(err, &argErr) {
		return fmt.Errorf("bad arguments were not refused: %v", err)
	}
	fmt.Fprintf(out, "\nconvert.Call with bad arguments (errors.Is ErrInvalidArguments: %v):\n%v\n",
		errors.Is(err, onion.ErrInvalidArguments), err)
	return nil
}
