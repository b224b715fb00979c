// Package testagent is the agent the durable runtime's tests run on
// workers, in replays and in other processes: its tools must be the same
// everywhere a recorded run is replayed.
package testagent

import (
	"context"

	"github.com/onionkit/onion"
)

// Name is the agent's name.
const Name = "shop"

// On is what every tool call does: the tool's name and the call's
// context in, the tool's text or error out.
type On func(ctx context.Context, tool string) (string, error)

// New is the agent: stock (a read), send and note (writes), refund (a
// write that needs approval), each doing what on says, with the model
// given by model (such as onion.BaseURL of an oniontest server).
func New(on On, model ...onion.Option) (*onion.Agent, error) {
	type (
		sku   struct{ SKU string }
		to    struct{ To string }
		note  struct{ Text string }
		order struct{ Order int }
	)
	stock, err := onion.NewTool(func(ctx context.Context, _ sku) (string, error) { return on(ctx, "stock") },
		onion.Name("stock"), onion.Description("Counts the stock of a SKU."), onion.Read)
	if err != nil {
		return nil, err
	}
	send, err := onion.NewTool(func(ctx context.Context, _ to) (string, error) { return on(ctx, "send") },
		onion.Name("send"), onion.Description("Sends the parcel."), onion.Write)
	if err != nil {
		return nil, err
	}
	noteTool, err := onion.NewTool(func(ctx context.Context, _ note) (string, error) { return on(ctx, "note") },
		onion.Name("note"), onion.Description("Adds a note to the order."), onion.Write)
	if err != nil {
		return nil, err
	}
	refund, err := onion.NewTool(func(ctx context.Context, _ order) (string, error) { return on(ctx, "refund") },
		onion.Name("refund"), onion.Description("Refunds an order."), onion.Write, onion.RequireApproval())
	if err != nil {
		return nil, err
	}
	items := []any{stock, send, noteTool, refund, onion.MaxIterations(12)}
	for _, m := range model {
		items = append(items, m)
	}
	return onion.NewAgent(Name, items...)
}

// LeadName is the name of the lead agent NewLead makes.
const LeadName = "lead"

// NewLead is a lead agent whose one tool is shop, an agent New made: it
// hands shop its tasks. Its model is given by model, as New's.
func NewLead(shop *onion.Agent, model ...onion.Option) (*onion.Agent, error) {
	items := []any{shop, onion.MaxIterations(4)}
	for _, m := range model {
		items = append(items, m)
	}
	return onion.NewAgent(LeadName, items...)
}
