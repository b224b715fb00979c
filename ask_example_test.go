package onion_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// snippet:ask-type
// Bill is what an invoice says.
type Bill struct {
	// Number is the invoice's number, as printed.
	Number string  `json:"number"`
	Total  float64 `json:"total" jsonschema:"minimum=0"`
	Status Status  `json:"status"`
}

// Status says whether an invoice is paid.
type Status string

const (
	Paid Status = "paid"
	Due  Status = "due"
)

// end snippet:ask-type

// InvoiceText returns the text of an invoice.
//
// id: the invoice's id, such as F-12
//
//onion:intent read
func InvoiceText(id string) (string, error) {
	return "Invoice " + id + ". Total due: 120.50 EUR by 2026-12-31.", nil
}

// A typed final answer, after a tool call, from a scripted server.
func ExampleAsk() {
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("invoice_text", `{"id":"F-12"}`)),
		oniontest.Text(`{"number":"F-12","total":120.5,"status":"due"}`),
	)
	defer s.Close()
	agent, err := onion.NewAgent("clerk", InvoiceText, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// snippet:ask
	bill, res, err := onion.Ask[Bill](ctx, agent, "Read invoice F-12.")
	var bad *onion.AnswerError
	if errors.As(err, &bad) { // still no Bill after one corrective turn
		log.Fatalf("the model answered %q: %v", bad.Raw, bad.Problems)
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(bill.Number, bill.Total, bill.Status, len(res.ToolCalls))
	// end snippet:ask

	// Output: F-12 120.5 due 1
}

// A token budget: the second request comes without tools, since another
// round of tool calls would not have left room for the answer.
func ExampleTokenBudget() {
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)).WithUsage(3000, 200),
		oniontest.Text("Sunny in Paris.").WithUsage(3300, 20),
	)
	defer s.Close()
	ctx := context.Background()
	// snippet:budget
	agent, err := onion.NewAgent("assistant", Weather, onion.TokenBudget(8000),
		onion.Hooks{AfterModel: func(ctx context.Context, e onion.ModelEvent) error {
			fmt.Println(e.RunUsage.TotalTokens, "tokens spent")
			return nil
		}},
		onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		log.Fatal(err)
	}
	res, err := agent.Run(ctx, "What is the weather in Paris?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output, res.StopReason, res.Usage.TotalTokens)
	// end snippet:budget

	// Output:
	// 3200 tokens spent
	// 6520 tokens spent
	// Sunny in Paris. budget 6520
}

// A typed answer streamed: the text arrives as it is made, the value with
// the last event.
func ExampleAskStream() {
	s := oniontest.NewServer(nil, oniontest.Text(`{"answer":"paid"}`))
	defer s.Close()
	agent, err := onion.NewAgent("clerk", InvoiceText, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		log.Fatal(err)
	}
	for e, err := range onion.AskStream[Status](context.Background(), agent, "Is F-12 paid?") {
		if err != nil {
			log.Fatal(err)
		}
		if e.Kind == onion.EventDone {
			fmt.Println(e.Answer.(Status) == Paid)
		}
	}
	// Output: true
}

// Typed answers within a conversation: each turn is kept.
func ExampleAskIn() {
	s := oniontest.NewServer(nil, oniontest.Text(`{"answer":"due"}`), oniontest.Text(`{"answer":"paid"}`))
	defer s.Close()
	agent, err := onion.NewAgent("clerk", InvoiceText, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		log.Fatal(err)
	}
	conv := agent.NewConversation()
	ctx := context.Background()
	before, _, err := onion.AskIn[Status](ctx, conv, "Is F-12 paid?")
	if err != nil {
		log.Fatal(err)
	}
	after, _, err := onion.AskIn[Status](ctx, conv, "And now that the transfer came in?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(before, after, len(conv.History()))
	// Output: due paid 4
}
