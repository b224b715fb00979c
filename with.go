package onion

import (
	"fmt"
	"slices"

	"github.com/onionkit/onion/loop"
)

// With returns a copy of the agent with opts applied after the options it
// was made with: the same name, tools and model, with another Approver,
// more hooks (WithHooks) or instruments (WithInstrument), another Logger
// or other limits, for the runs of one caller, such as a page that
// answers approvals in a browser or a server that asks each request's own
// user. The agent itself is unchanged. The copy shares the agent's tools,
// so close only one of the two (Close).
//
// An option that changes how the model is reached or how the tools are
// sent to it (Model, BaseURL, APIKey, WithClient, WithModel, ResponsesAPI,
// ChainResponses, Strict) is refused: make another agent with NewAgent for
// that.
func (a *Agent) With(opts ...Option) (*Agent, error) {
	// The options alone, on an empty config, show what they set.
	var probe config
	for _, o := range opts {
		if err := o.applyAgent(&probe); err != nil {
			return nil, fmt.Errorf("onion: Agent.With of %q: %w", a.name, err)
		}
	}
	if probe.model != "" || probe.baseURL != "" || probe.apiKey != "" || probe.client != nil ||
		probe.languageModel != nil || probe.responses != responsesOff || probe.strict {
		return nil, fmt.Errorf("onion: Agent.With of %q: an option changes the model or how the tools are sent (Model, BaseURL, APIKey, WithClient, WithModel, ResponsesAPI, ChainResponses or Strict): give it to NewAgent instead", a.name)
	}
	b := *a
	b.cfg.hooks = slices.Clone(a.cfg.hooks)
	b.cfg.instruments = slices.Clone(a.cfg.instruments)
	for _, o := range opts {
		if err := o.applyAgent(&b.cfg); err != nil {
			return nil, fmt.Errorf("onion: Agent.With of %q: %w", a.name, err)
		}
	}
	core, err := loop.New(b.loopConfig())
	if err != nil {
		return nil, fmt.Errorf("onion: Agent.With of %q: %w", a.name, err)
	}
	b.core = core
	return &b, nil
}
