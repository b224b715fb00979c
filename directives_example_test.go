package onion_test

import (
	"context"
	"fmt"
	"log"

	"github.com/onionkit/onion"
)

// The package doc's directive example, compiled and run: TestDocSnippets
// keeps doc.go's copy equal to the region below.

var balances = map[string]int{"acme": 120}

// ChargeRequest is money to take from an account.
type ChargeRequest struct {
	Account string `json:"account" doc:"the account to charge"`
	Cents   int    `json:"cents" doc:"how much, in cents"`
}

// RefundRequest is money to pay back.
type RefundRequest struct {
	Account string `json:"account" doc:"the account to pay"`
	Cents   int    `json:"cents" doc:"how much, in cents"`
}

// snippet:directives

// Balance returns the balance of an account.
//
//onion:intent read
func Balance(account string) (int, error) { return balances[account], nil }

// Charge takes money from an account; safe to retry with the same call.
//
//onion:idempotent
func Charge(ctx context.Context, c ChargeRequest) error {
	balances[c.Account] -= c.Cents
	return nil
}

// Refund pays money back.
//
//onion:approve
func Refund(ctx context.Context, r RefundRequest) error {
	balances[r.Account] += r.Cents
	return nil
}

// end snippet:directives

func Example_directives() {
	agent, err := onion.NewAgent("billing", Balance, Charge, Refund)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range agent.Tools().All() {
		fmt.Println(t.Name(), t.Intent(), t.Idempotent(), t.NeedsApproval(context.Background(), onion.Call{}))
	}
	// Output:
	// balance read false false
	// charge write true false
	// refund write false true
}
