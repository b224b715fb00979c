// Command durable runs an onion agent durably on Temporal: the run survives
// this process being killed, the refund it may make is sent at most once,
// and the refund waits for your approval as long as it takes.
//
// Start a server on one machine, then this program (from the temporal
// directory of the repository):
//
//	(cd devserver && go run ./cmd/onion-temporal -db /tmp/onion-temporal.db)
//	go run ./examples/durable -id order-42 "Order 42 arrived broken: refund it"
//
// Kill the second command at any point (even with kill -9) and run it again
// with the same -id: it picks the run up where it was. Point it at a model
// as every onion example: OPENAI_API_KEY, or OPENAI_BASE_URL (and
// ONION_MODEL) for a local OpenAI-compatible server.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/temporal"
)

// Order is what the shop knows of an order.
type Order struct {
	ID     int    `json:"id"`
	Item   string `json:"item"`
	Amount int    `json:"amount_cents"`
	Status string `json:"status"`
}

type lookupArgs struct {
	OrderID int `json:"order_id" jsonschema:"description=the order's number"`
}

type refundArgs struct {
	OrderID int    `json:"order_id" jsonschema:"description=the order's number"`
	Reason  string `json:"reason" jsonschema:"description=why, in a few words"`
}

func lookup(_ context.Context, a lookupArgs) (Order, error) {
	return Order{ID: a.OrderID, Item: "teapot", Amount: 2900, Status: "delivered"}, nil
}

func refund(ctx context.Context, a refundArgs) (string, error) {
	call, _ := onion.CallInfo(ctx)
	// A real refund passes call.IdempotencyKey to the payment API, so that
	// even a retried request cannot refund twice.
	return fmt.Sprintf("refunded order %d (idempotency key %s)", a.OrderID, call.IdempotencyKey), nil
}

// newAgent is the agent every worker must serve, the same everywhere.
func newAgent() (*onion.Agent, error) {
	lookupTool, err := onion.NewTool(lookup, onion.Name("lookup_order"), onion.Description("Looks up an order."), onion.Read)
	if err != nil {
		return nil, err
	}
	refundTool, err := onion.NewTool(refund, onion.Name("refund_order"),
		onion.Description("Refunds an order in full."), onion.Write, onion.RequireApproval())
	if err != nil {
		return nil, err
	}
	return onion.NewAgent("support", lookupTool, refundTool, onion.MaxIterations(5),
		onion.SystemPrompt("You are a shop's support agent. Look orders up before acting on them."))
}

func main() {
	hostPort := flag.String("hostport", client.DefaultHostPort, "the Temporal frontend to dial")
	id := flag.String("id", "", "the run's workflow ID; run again with the same ID to pick a run up")
	queue := flag.String("queue", "onion-durable", "the task queue")
	flag.Parse()
	if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		log.Fatal(onion.ErrNoModel) // before a server starts; a run would say the same
	}
	prompt := strings.Join(flag.Args(), " ")
	if err := run(*hostPort, *queue, *id, prompt); err != nil {
		log.Fatal(err)
	}
}

func run(hostPort, queue, id, prompt string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// The SDK logs every activity by default: warnings only here.
	logger := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: hostPort, Logger: logger})
	if err != nil {
		return fmt.Errorf("dial %s (is the server running?): %w", hostPort, err)
	}
	defer c.Close()
	agent, err := newAgent()
	if err != nil {
		return err
	}
	// snippet:worker
	w, err := temporal.NewWorker(c, queue, agent) // the same agents on every worker
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	// end snippet:worker

	var wr client.WorkflowRun
	if id != "" {
		// A run with this ID may be going already: pick it up.
		if _, err := c.DescribeWorkflowExecution(ctx, id, ""); err == nil {
			wr = c.GetWorkflow(ctx, id, "")
			fmt.Println("picking up run", id)
		} else if _, missing := errors.AsType[*serviceerror.NotFound](err); !missing {
			return err
		}
	}
	if wr == nil {
		if prompt == "" {
			return errors.New("give a prompt, such as: \"Order 42 arrived broken: refund it\"")
		}
		var opts []temporal.StartOption
		if id != "" {
			opts = append(opts, temporal.WorkflowID(id))
		}
		if wr, err = temporal.Start(ctx, c, queue, agent.Name(), prompt, opts...); err != nil {
			return err
		}
		fmt.Println("started run", wr.GetID())
	}
	go answerApprovals(ctx, c, wr.GetID())
	res, err := temporal.Result(ctx, wr)
	if err != nil {
		return err
	}
	for _, tc := range res.ToolCalls {
		fmt.Printf("  %s %s: %s\n", tc.Name, tc.Arguments, tc.Outcome)
	}
	fmt.Println(res.Output)
	return nil
}

// answerApprovals asks on the terminal about each call that waits for
// approval. Anyone else may answer instead, from any process, with
// temporal.Approve.
func answerApprovals(ctx context.Context, c client.Client, id string) {
	in := bufio.NewReader(os.Stdin)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		calls, err := temporal.Pending(ctx, c, id)
		if err != nil {
			continue
		}
		for _, call := range calls {
			fmt.Printf("%s wants to call %s %s. Allow? [y/N] ", id, call.Name, call.Arguments)
			line, _ := in.ReadString('\n')
			ok := strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "y")
			if err := temporal.Approve(ctx, c, id, call.ID, ok); err != nil {
				fmt.Println(err)
			}
		}
	}
}
