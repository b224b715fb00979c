// Research shows a lead agent that searches the web and hands the reading
// to a reader, an agent of its own given to the lead as a tool, and answers
// follow-up questions in the same conversation. The lead has web_search and
// the reader; the reader alone has web_fetch, with its own system prompt
// and round cap, and sees only the task the lead writes for it. At most
// four rounds of tool calls are made per question (onion.MaxIterations),
// after which the model must answer from what it has. Both system prompts
// ask to report what failed instead of filling gaps from memory. The
// reader's calls show, under the lead's, through the lead's hooks.
//
// The search provider comes from the environment (see builtin.SearchFromEnv):
// SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY. Questions are the arguments,
// or lines read from standard input when there are none:
//
//	OPENAI_API_KEY=sk-... BRAVE_API_KEY=... go run ./examples/research "What is new in Go 1.26?" "Which of those affect generics?"
//	OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=qwen3 SEARXNG_URL=http://localhost:8888 go run ./examples/research
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin"
	"github.com/onionkit/onion/builtin/webfetch"
)

const systemPrompt = `You answer research questions using web_search and the reader.
Search first, then give the reader the most relevant URLs and the question, and answer from what it reports, citing the URLs.
If a search or a reading fails, or the pages do not answer the question, say exactly that: never invent facts, URLs or quotes.`

const readerPrompt = `You read the web pages named in the task with web_fetch and report what they say about the task's question, citing each URL.
If a page cannot be fetched, say so with the error. Never add what the pages do not say.`

// config holds the tools the program runs with, which a test replaces with
// ones pointed at loopback servers.
type config struct {
	search *onion.Tool
	fetch  *onion.Tool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	provider, err := builtin.SearchFromEnv()
	if err != nil {
		// web_search still exists and tells the model it cannot search,
		// which the model is asked to pass on.
		fmt.Fprintln(os.Stderr, "research: no search provider:", err)
	}
	cfg := config{
		search: builtin.NewWebSearch(provider),
		fetch:  webfetch.NewWebFetch(),
	}
	if err := run(ctx, os.Stdin, os.Stdout, os.Args[1:], cfg); err != nil {
		fmt.Fprintln(os.Stderr, "research:", err)
		os.Exit(1)
	}
}

// run answers each question in questions, or each line of in when there
// are none, in one conversation.
func run(ctx context.Context, in io.Reader, out io.Writer, questions []string, cfg config) error {
	if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		return errors.New("no model: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server such as http://localhost:11434/v1")
	}
	// snippet:subagent
	reader, err := onion.NewAgent("reader", cfg.fetch,
		onion.Description("Reads the web pages named in the task and reports what they say about its question, citing URLs. Give it the URLs and the question."),
		onion.MaxIterations(4),
		onion.SystemPrompt(readerPrompt))
	if err != nil {
		return err
	}
	defer reader.Close()
	// The reader's calls reach the lead's hooks with the path of agents.
	showInner := onion.Hooks{AfterTool: func(ctx context.Context, e onion.ToolEvent) error {
		if len(e.Call.Agents) > 0 {
			fmt.Fprintf(out, "  [%s → %s]\n", strings.Join(e.Call.Agents[1:], " → "), callLine(e.Call))
		}
		return nil
	}}
	agent, err := onion.NewAgent("research", cfg.search, reader,
		onion.MaxIterations(4),
		onion.SystemPrompt(systemPrompt),
		onion.WithHooks(showInner))
	// end snippet:subagent
	if err != nil {
		return err
	}
	defer agent.Close()
	conv := agent.NewConversation() // follow-ups see the earlier questions and answers

	ask := func(q string) error {
		fmt.Fprintf(out, "(working on %q)\n", q)
		res, err := conv.Run(ctx, q)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "> %s\n", q)
		for _, c := range res.ToolCalls {
			fmt.Fprintf(out, "  [%s]\n", callLine(c))
		}
		fmt.Fprintf(out, "%s\n(%d rounds of tools, stopped: %s)\n\n", res.Output, res.Iterations, res.StopReason)
		return nil
	}
	if len(questions) > 0 {
		for _, q := range questions {
			if err := ask(q); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintln(out, "Ask a question; follow-ups may refer to earlier answers. An empty line ends.")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		q := strings.TrimSpace(sc.Text())
		if q == "" {
			break
		}
		if err := ask(q); err != nil {
			return err
		}
	}
	return sc.Err()
}

// callLine is a tool call on one line: its name, arguments and outcome.
func callLine(c onion.ToolCall) string {
	line := fmt.Sprintf("%s %s: %s", c.Name, c.Arguments, c.Outcome)
	if c.Error != "" {
		line += " " + firstLine(c.Error)
	}
	return line
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
