package main

import (
	"flag"
	"os"

	"github.com/onionkit/onion"
)

// errNoModel is what run and chat say when no model is configured, in the
// examples' words.
var errNoModel = usageError{onion.ErrNoModel}

// modelFlags are the flags of the commands that run the agent.
type modelFlags struct {
	model         string
	baseURL       string
	responses     bool
	maxIterations int
	system        string
	session       string
	approve       string
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	m.registerModel(fs)
	fs.StringVar(&m.session, "session", "", "load the conversation from `FILE` if it exists, and save it there after each turn")
	fs.StringVar(&m.approve, "approve", "", "allow these `tools` (comma-separated names) without asking; when stdin is not a terminal every other call that needs approval is denied")
}

// registerModel registers the flags that choose the model and its limits.
func (m *modelFlags) registerModel(fs *flag.FlagSet) {
	fs.StringVar(&m.model, "model", "", "the model `name` (default $ONION_MODEL, else gpt-4o-mini): anthropic/NAME or gemini/NAME for those providers (keys from $ANTHROPIC_API_KEY, $GEMINI_API_KEY), openai/NAME or a bare name for OpenAI's wires")
	fs.StringVar(&m.baseURL, "base-url", "", "the OpenAI-compatible endpoint, `URL` including /v1 (default $OPENAI_BASE_URL, else OpenAI's)")
	fs.BoolVar(&m.responses, "responses", false, "speak the Responses API (/v1/responses) instead of Chat Completions")
	fs.IntVar(&m.maxIterations, "max-iterations", 10, "cap the rounds of tool calls at `N`")
	fs.StringVar(&m.system, "system", "", "the system prompt `TEXT`")
}

// options returns the agent options the flags and the environment give,
// or errNoModel when neither names an endpoint. A key is needed only for
// OpenAI itself: with a base URL (Ollama, vLLM, oniontest) none is.
func (m *modelFlags) options() ([]onion.Option, error) {
	if m.baseURL == "" && os.Getenv("OPENAI_BASE_URL") == "" && os.Getenv("OPENAI_API_KEY") == "" && !providerModel(m.model) {
		return nil, errNoModel
	}
	opts := []onion.Option{onion.MaxIterations(m.maxIterations)}
	if m.model != "" {
		opts = append(opts, onion.Model(m.model))
	}
	if m.baseURL != "" {
		opts = append(opts, onion.BaseURL(m.baseURL))
	}
	if m.responses {
		opts = append(opts, onion.ResponsesAPI())
	}
	if m.system != "" {
		opts = append(opts, onion.SystemPrompt(m.system))
	}
	return opts, nil
}
