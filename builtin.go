package onion

import "github.com/onionkit/onion/openai"

// This file is the agent's default model: package openai's client, made
// from the agent's options (Model, BaseURL, APIKey, WithClient,
// ResponsesAPI, ChainResponses) or the environment.

// ResponsesAPI makes the built-in client speak the Responses API (POST
// /v1/responses) instead of Chat Completions, at the same BaseURL and with
// the same key, or through the client given to WithClient. Requests are
// stateless: store is false, a reasoning model's reasoning is asked for
// encrypted (include reasoning.encrypted_content; a model that refuses it,
// as OpenAI's models without reasoning do, is asked without it from then
// on), and each response's output items, reasoning items among them, are
// sent back as they came in the following requests, so the model keeps
// its reasoning across tool calls while the server keeps nothing.
// Streaming, parallel calls, errors and retries behave as on Chat
// Completions. It has no effect with WithModel. See openai.ResponsesAPI.
func ResponsesAPI() Option {
	return optionFunc(func(c *config) error {
		if c.responses == responsesOff {
			c.responses = responsesStateless
		}
		return nil
	})
}

// ChainResponses makes the agent use the Responses API (as ResponsesAPI
// does) with the conversation kept on the server: responses are stored
// (store is true) and each request names the last response it follows
// with previous_response_id and carries only what came after it, the tool
// results. Requests are smaller, but the provider keeps the conversation
// and the run depends on it still having it. See openai.ChainResponses.
func ChainResponses() Option {
	return optionFunc(func(c *config) error { c.responses = responsesChained; return nil })
}

// responsesMode says which wire the built-in client speaks.
type responsesMode int

const (
	responsesOff       responsesMode = iota // Chat Completions
	responsesStateless                      // the Responses API, store false
	responsesChained                        // the Responses API with previous_response_id
)

// builtinModel is package openai's client, made from the agent's options.
// The agent has a client of its own, or a key or a base URL (see
// ErrNoModel), so New does not fail.
func (c *config) builtinModel() (LanguageModel, error) {
	opts := []openai.Option{openai.BaseURL(c.baseURL), openai.APIKey(c.apiKey)}
	if c.client != nil {
		opts = append(opts, openai.WithClient(c.client))
	}
	switch c.responses {
	case responsesStateless:
		opts = append(opts, openai.ResponsesAPI())
	case responsesChained:
		opts = append(opts, openai.ChainResponses())
	}
	return openai.New(opts...)
}

// CloseIdleConnections closes the idle connections of the built-in
// client, the pool that every agent made without WithClient shares;
// connections in use are left alone, and later requests dial again as
// needed. Call it when a program, or a test checking that no goroutine is
// left, is done with its agents. A client given with WithClient is the
// caller's to close. It is openai.CloseIdleConnections.
func CloseIdleConnections() { openai.CloseIdleConnections() }

// builtinPrefix starts a model's name that names the built-in client
// explicitly ("openai/gpt-4o"): package openai registers it, but the agent
// opens the model itself, so that its options (BaseURL, APIKey,
// WithClient, ResponsesAPI) apply.
const builtinPrefix = openai.Prefix + "/"
