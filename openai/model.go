package openai

import (
	"context"
	"errors"
	"os"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// This file is the package's face: the Model, the options it is made
// with, and its registration under the prefix "openai".

// Model is a loop.LanguageModel that speaks OpenAI's Chat Completions or,
// with ResponsesAPI or ChainResponses, the Responses API, to OpenAI or any
// server compatible with it, through go-openai. Each Generate sends one
// request, streamed when it is given an onDelta; failures come back as
// *loop.ModelError, with the server's Retry-After when it sent one, and
// the caller retries. A Model is safe for use by several goroutines.
type Model struct {
	chat      *chatModel      // nil when the Model speaks the Responses API
	responses *responsesModel // nil when it speaks Chat Completions
}

// An Option configures a Model made by New.
type Option func(*config)

type config struct {
	baseURL, apiKey string
	client          *goopenai.Client
	nilClient       bool // WithClient was given nil
	responses       bool // the Responses API instead of Chat Completions
	chain           bool // ... with previous_response_id
}

// BaseURL sets the endpoint, including /v1 (default $OPENAI_BASE_URL,
// else OpenAI's). Ollama: http://localhost:11434/v1.
func BaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// APIKey sets the API key (default $OPENAI_API_KEY). It is sent in the
// Authorization header and nowhere else.
func APIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithClient sends through a ready go-openai client, such as one
// configured for Azure OpenAI; BaseURL and APIKey are then ignored. Its
// replies' Retry-After headers and mid-stream errors are read as for a
// client New makes. Without it, a Model sends through the connection pool
// every such Model shares (see CloseIdleConnections).
func WithClient(client *goopenai.Client) Option {
	return func(c *config) { c.client, c.nilClient = client, client == nil }
}

// ResponsesAPI makes the Model speak the Responses API (POST
// /v1/responses) instead of Chat Completions. Requests are stateless:
// store is false, a reasoning model's reasoning is asked for encrypted
// (include reasoning.encrypted_content; a model that refuses it, as
// OpenAI's models without reasoning do, is asked without it from then
// on), and each response's output items, reasoning items among them, are
// sent back as they came in the following requests (loop.Message.Items),
// so the model keeps its reasoning across tool calls while the server
// keeps nothing.
func ResponsesAPI() Option { return func(c *config) { c.responses = true } }

// ChainResponses makes the Model speak the Responses API (as ResponsesAPI
// does) with the conversation kept on the server: responses are stored
// (store is true) and each request names the last response it follows
// with previous_response_id and carries only what came after it.
// Requests are smaller, but the provider keeps the conversation and a run
// depends on it still having it.
func ChainResponses() Option { return func(c *config) { c.responses, c.chain = true, true } }

// errNoKey is New's error when there is nothing to send requests to.
var errNoKey = errors.New("openai: no API key: set OPENAI_API_KEY (or the APIKey option) to use OpenAI, or OPENAI_BASE_URL (or the BaseURL option) for a local OpenAI-compatible server, e.g. http://localhost:11434/v1")

// New makes a Model. Without options it reads $OPENAI_API_KEY and
// $OPENAI_BASE_URL; it fails when it has neither (nor a client of
// WithClient), since no request could succeed.
func New(opts ...Option) (*Model, error) {
	c := config{baseURL: os.Getenv("OPENAI_BASE_URL"), apiKey: os.Getenv("OPENAI_API_KEY")}
	for _, o := range opts {
		o(&c)
	}
	var client *goopenai.Client
	switch {
	case c.nilClient:
		return nil, errors.New("openai.WithClient(nil): give a *openai.Client of go-openai")
	case c.client != nil:
		client = recordingClient(c.client)
	case c.apiKey == "" && c.baseURL == "":
		return nil, errNoKey
	default:
		oc := goopenai.DefaultConfig(c.apiKey)
		if c.baseURL != "" {
			oc.BaseURL = c.baseURL
		}
		oc.HTTPClient = retryAfterRecorder{inner: builtinHTTPClient()}
		client = goopenai.NewClientWithConfig(oc)
	}
	if c.responses {
		return &Model{responses: &responsesModel{client: client, chain: c.chain,
			splice: splices(client), tools: toolsCache{encode: responsesTools}, emptyLimit: emptyLimit(client)}}, nil
	}
	return &Model{chat: newChatModel(client)}, nil
}

// Generate sends req once, streamed when onDelta is not nil (see
// loop.LanguageModel).
func (m *Model) Generate(ctx context.Context, req *loop.Request, onDelta func(loop.Delta)) (*loop.Response, error) {
	if m.responses != nil {
		return m.responses.Generate(ctx, req, onDelta)
	}
	return m.chat.Generate(ctx, req, onDelta)
}

// Prefix is the prefix this package registers with loop.Register: an
// agent's model named "openai/gpt-4o" is OpenAI's gpt-4o, and
// "openai/meta-llama/llama-3" is "meta-llama/llama-3" at an
// OpenAI-compatible server such as OpenRouter's.
const Prefix = "openai"

func init() {
	loop.Register(Prefix, func(string) (loop.LanguageModel, error) {
		m, err := New()
		if err != nil {
			return nil, err
		}
		return m, nil
	})
}
