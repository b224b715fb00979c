// Automation shows scheduled runs: the user asks the agent for something
// recurring, the agent calls start_automation, the user approves, and the
// in-process scheduler keeps the automation (in a file with -store) and
// fires it, as a fresh run of the agent, while the program runs (-wait).
//
// Without OPENAI_API_KEY or OPENAI_BASE_URL a scripted model stands in for
// one, so it runs as it is:
//
//	go run ./examples/automation
//	go run ./examples/automation -store /tmp/automations.json -wait
//	OPENAI_API_KEY=sk-... go run ./examples/automation "Every weekday at 8:30, give me the weather in Lyon"
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/automation"
)

const (
	defaultPrompt = "Every Monday at 9, check the sales report and tell me what changed."
	zone          = "Europe/Paris" // the user's time zone
)

func main() {
	store := flag.String("store", "", "the file the automations are kept in (none: in memory)")
	wait := flag.Bool("wait", false, "keep running, firing the automations, until interrupted")
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		prompt = defaultPrompt
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdin, os.Stdout, *store, prompt, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "automation:", err)
		os.Exit(1)
	}
}

// run is the program, with the terminal passed in so that a test can answer
// the approval.
func run(ctx context.Context, in io.Reader, out io.Writer, store, prompt string, wait bool) error {
	// snippet:scheduler
	scheduler, err := automation.NewLocal(store, automation.Options{
		OnResult: func(ctx context.Context, a automation.Automation, res *onion.Result, err error) {
			if err != nil {
				fmt.Fprintf(out, "[%s] failed: %v\n", a.ID, err)
				return
			}
			fmt.Fprintf(out, "[%s] %s\n", a.ID, res.Output)
		},
	})
	if err != nil {
		return err
	}
	defer scheduler.Close()
	tools, err := automation.Tools(scheduler, "assistant") // start_automation asks for approval
	if err != nil {
		return err
	}
	agent, err := onion.NewAgent("assistant", tools, SalesReport, model(),
		onion.Approver(onion.TerminalApprover(in, out)),
		onion.SystemPrompt(fmt.Sprintf("The user's time zone is %s; it is now %s.", zone, time.Now().Format(time.RFC1123))))
	if err != nil {
		return err
	}
	if err := scheduler.Start(agent); err != nil { // fires from now until Close
		return err
	}
	// end snippet:scheduler

	fmt.Fprintf(out, "> %s\n", prompt)
	answer, err := agent.Input(ctx, prompt)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, answer)

	as, err := scheduler.List(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d automation(s):\n", len(as))
	for _, a := range as {
		fmt.Fprintf(out, "  %s: %q, %s\n", a.ID, a.Input, a.Schedule)
		for _, t := range a.Fires(time.Now(), 3) {
			fmt.Fprintf(out, "    next: %s\n", t.Format("Mon 2 Jan 2006 15:04 MST"))
		}
	}
	if !wait {
		return nil
	}
	fmt.Fprintln(out, "Firing while this program runs; interrupt to stop.")
	<-ctx.Done()
	return nil
}

// SalesReport returns this week's sales report.
//
//onion:intent read
func SalesReport() string {
	return "Week 49: revenue 48,200 EUR (+4% on week 48); refunds 3 (week 48: 7); top product: the blue kettle."
}

// model is the model: OpenAI or a local server when configured (the
// agent's own client), else the scripted stand-in.
func model() onion.Option {
	if os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "" {
		return onion.MaxIterations(10)
	}
	return onion.WithModel(scripted{})
}

// scripted plays the model's part for the default prompt: it schedules
// the weekly check, reports what was scheduled, and, when an automation
// fires, reads the sales report.
type scripted struct{}

func (scripted) Generate(_ context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	reply := func(m onion.Message) (*onion.Response, error) {
		m.Role = onion.RoleAssistant
		return &onion.Response{Message: m}, nil
	}
	call := func(name, args string) (*onion.Response, error) {
		return reply(onion.Message{ToolCalls: []onion.ToolRequest{{ID: "call_" + name, Name: name, Arguments: args}}})
	}
	switch {
	case last.Role == onion.RoleUser && strings.HasPrefix(last.Content, "Check the sales report"): // a fire
		return call("sales_report", `{}`)
	case last.Role == onion.RoleUser:
		args, _ := json.Marshal(map[string]string{"input": "Check the sales report and tell me what changed since last week.", "cron": "0 9 * * MON", "time_zone": zone})
		return call("start_automation", string(args))
	case strings.HasPrefix(last.Content, "Week "):
		return reply(onion.Message{Content: "Sales are up 4% on last week and refunds fell from 7 to 3."})
	}
	var started struct {
		NextRuns []string `json:"next_runs"`
	}
	if err := json.Unmarshal([]byte(last.Content), &started); err != nil || len(started.NextRuns) == 0 {
		return reply(onion.Message{Content: "I did not schedule it: " + last.Content})
	}
	return reply(onion.Message{Content: "Done: every Monday at 9:00 (" + zone + ") I will check the sales report. First runs: " + strings.Join(started.NextRuns, ", ") + "."})
}
