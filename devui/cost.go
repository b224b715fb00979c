package devui

import (
	"slices"
	"strings"

	"github.com/onionkit/onion"
)

// This file counts tokens by model, and prices them when the UI was given
// the model's price (Prices).

// maxModels bounds the models counted apart: a model's name comes from
// the agent, but a provider's reply may name another; past the bound,
// the rest count as "other".
const maxModels = 64

// modelUsage is the tokens of every request to one model.
type modelUsage struct {
	Model string      `json:"model"`
	Usage onion.Usage `json:"usage"`
	Cost  *float64    `json:"cost,omitempty"` // nil: no price given
	Price *Price      `json:"price,omitempty"`
}

// addUsage counts u as a request to model. u.mu is held.
func (u *UI) addUsage(model string, use onion.Usage) {
	m, ok := u.byModel[model]
	if !ok {
		if len(u.byModel) >= maxModels {
			model = "other"
			m = u.byModel[model]
		}
		if m == nil {
			m = &modelUsage{Model: model}
			u.byModel[model] = m
		}
	}
	use.Requests = 1
	m.Usage.Add(use)
	if p, ok := u.price(model); ok {
		c := p.of(m.Usage)
		m.Cost, m.Price = &c, &p
	}
}

// usageView is the tokens by model, by name. u.mu is held.
func (u *UI) usageView() []*modelUsage {
	out := make([]*modelUsage, 0, len(u.byModel))
	for _, m := range u.byModel {
		c := *m
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *modelUsage) int { return strings.Compare(a.Model, b.Model) })
	return out
}

// price returns the price of model: the one given for its name, or for
// the longest name it starts with followed by '-'.
func (u *UI) price(model string) (Price, bool) {
	if p, ok := u.set.prices[model]; ok {
		return p, true
	}
	best, found := "", false
	var bp Price
	for name, p := range u.set.prices {
		if strings.HasPrefix(model, name+"-") && len(name) > len(best) {
			best, bp, found = name, p, true
		}
	}
	return bp, found
}

// of is what use costs at p, in dollars.
func (p Price) of(use onion.Usage) float64 {
	cached := p.CachedInput
	if cached == 0 {
		cached = p.Input
	}
	fresh := max(use.PromptTokens-use.CachedTokens, 0)
	return (float64(fresh)*p.Input + float64(use.CachedTokens)*cached + float64(use.CompletionTokens)*p.Output) / 1e6
}

// cost is what the requests of steps cost, or nil when one of their
// models has no price. u.mu is held.
func (u *UI) cost(steps []*modelStep) *float64 {
	if len(u.set.prices) == 0 {
		return nil
	}
	var total float64
	for _, st := range steps {
		if st.Status != "done" {
			continue
		}
		p, ok := u.price(st.Model)
		if !ok {
			return nil
		}
		total += p.of(st.Usage)
	}
	return &total
}
