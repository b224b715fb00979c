// Browser shows the headless browser tools: the agent opens a page in
// Chromium, reads its visible text and answers from it. Chromium must be
// installed (CHROME_PATH, else chromium, chromium-browser or google-chrome on
// the PATH); it starts on the first tool call and stops when the agent is
// closed. Only public internet addresses can be opened.
//
//	OPENAI_API_KEY=sk-... go run ./examples/browser https://go.dev/doc/devel/release
//	OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=qwen3 go run ./examples/browser https://go.dev
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/browser"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	url := "https://go.dev"
	if len(os.Args) > 1 {
		url = os.Args[1]
	}
	if err := run(ctx, os.Stdout, browser.NewBrowser(), url); err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		os.Exit(1)
	}
}

// run asks the agent to read the page at url with b, which it closes.
// A test passes a browser allowed to reach loopback.
func run(ctx context.Context, out io.Writer, b *browser.Browser, url string) error {
	defer b.Close()
	if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		return errors.New("no model: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server such as http://localhost:11434/v1")
	}
	agent, err := onion.NewAgent("browser", b,
		onion.MaxIterations(5),
		onion.SystemPrompt("You read web pages with the browser tools and answer only from what the pages show."))
	if err != nil {
		return err
	}
	defer agent.Close()

	prompt := "Open " + url + " and summarise what the page says in two sentences."
	res, err := agent.Run(ctx, prompt)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "> %s\n", prompt)
	for _, c := range res.ToolCalls {
		fmt.Fprintf(out, "  [%s %s: %s]\n", c.Name, c.Arguments, c.Outcome)
	}
	fmt.Fprintln(out, res.Output)
	return nil
}
