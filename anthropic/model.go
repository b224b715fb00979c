package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/onionkit/onion/loop"
)

// This file is the model: its options, how it is made, and Generate,
// which writes a request (request.go), sends it through the SDK and reads
// the reply (reply.go, stream.go).

func init() {
	loop.Register("anthropic", func(model string) (loop.LanguageModel, error) {
		return New(model)
	})
}

// DefaultBaseURL is where requests go when neither BaseURL nor
// ANTHROPIC_BASE_URL says otherwise.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is the max_tokens of a request, which the Messages API
// requires, when MaxTokens does not set it. With Thinking it is added to
// the thinking budget.
const DefaultMaxTokens = 8192

// ErrNoAPIKey is the error of a request from a Model that has neither an
// API key nor a base URL: it names what to set.
var ErrNoAPIKey = errors.New("anthropic: no API key: set ANTHROPIC_API_KEY (or give anthropic.APIKey), or ANTHROPIC_BASE_URL for an Anthropic-compatible server")

// Model is a model of Anthropic's Messages API, a loop.LanguageModel. It is
// safe for concurrent use.
type Model struct {
	name      string
	client    sdk.Client
	endpoint  string // the messages URL, for errors until a request says it; "" with WithClient
	noKey     bool   // no key and no base URL: every request fails with ErrNoAPIKey
	maxTokens int
	// wholeOK says a request of maxTokens may be sent without streaming:
	// the SDK refuses one it expects to take over ten minutes, which is
	// then streamed with nobody listening.
	wholeOK  bool
	thinking thinking
	cache    bool
	ttl      string // "" for the default 5 minutes, or "1h"

	mu    sync.Mutex // guards tools
	tools toolsCache
}

type thinking struct {
	adaptive bool
	budget   int // budget_tokens; 0 with adaptive false: no thinking
}

// Option configures a Model.
type Option func(*config)

type config struct {
	apiKey, baseURL   *string
	client            *sdk.Client
	maxTokens         int
	thinking          thinking
	noCache           bool
	ttl               time.Duration
	errs              []error
	maxTokensExplicit bool
}

// APIKey sets the API key, sent in the x-api-key header; the default is
// $ANTHROPIC_API_KEY.
func APIKey(key string) Option {
	return func(c *config) { c.apiKey = &key }
}

// BaseURL sets where requests go, the URL before /v1/messages (as in
// "https://api.anthropic.com", or an Anthropic-compatible server's); the
// default is $ANTHROPIC_BASE_URL, else DefaultBaseURL. With a base URL a
// Model needs no key.
func BaseURL(u string) Option {
	return func(c *config) { c.baseURL = &u }
}

// WithClient makes the Model send its requests with a client of the
// program's, made with anthropic.NewClient of the SDK and configured as
// the program likes (credentials, base URL, HTTP client, middleware);
// APIKey, BaseURL and the environment are then not read. The Model adds
// its own options to each request: no retries of the SDK's own (the agent
// retries), its body, and a bound on the reply's size.
func WithClient(c *sdk.Client) Option {
	return func(cfg *config) { cfg.client = c }
}

// MaxTokens sets max_tokens, the most tokens a reply may have, thinking
// included (the default is DefaultMaxTokens, plus the thinking budget).
// A reply that reaches it is cut: its FinishReason is "max_tokens".
func MaxTokens(n int) Option {
	return func(c *config) {
		if n <= 0 {
			c.errs = append(c.errs, fmt.Errorf("anthropic.MaxTokens(%d): give a positive number of tokens", n))
			return
		}
		c.maxTokens, c.maxTokensExplicit = n, true
	}
}

// Thinking turns on extended thinking with a budget of budgetTokens (at
// least 1024, and less than MaxTokens): the model thinks before it
// answers, its thinking streams as loop.Delta.Reasoning and is kept in
// loop.Message.Reasoning, and its signed thinking blocks go back to the
// API with the turns they belong to. The API takes no temperature with
// thinking: a request's Temperature is then not sent.
func Thinking(budgetTokens int) Option {
	return func(c *config) {
		if budgetTokens < 1024 {
			c.errs = append(c.errs, fmt.Errorf("anthropic.Thinking(%d): the Messages API takes a budget of at least 1024 tokens", budgetTokens))
			return
		}
		c.thinking = thinking{budget: budgetTokens}
	}
}

// AdaptiveThinking turns on adaptive thinking ("thinking": {"type":
// "adaptive"}), where the model decides how much to think, for the models
// that offer it in place of a fixed budget. As with Thinking, a request's
// Temperature is not sent.
func AdaptiveThinking() Option {
	return func(c *config) { c.thinking = thinking{adaptive: true} }
}

// CacheTTL sets how long the prompt cache keeps what the breakpoints
// write: 5 minutes (the default) or an hour, the two lifetimes Anthropic
// offers. Writing for an hour costs more; reading costs the same.
func CacheTTL(d time.Duration) Option {
	return func(c *config) {
		if d != 5*time.Minute && d != time.Hour {
			c.errs = append(c.errs, fmt.Errorf("anthropic.CacheTTL(%v): Anthropic caches for 5m or 1h", d))
			return
		}
		c.ttl = d
	}
}

// NoCache sends no cache breakpoints: nothing is written to the prompt
// cache, and nothing is read from it.
func NoCache() Option {
	return func(c *config) { c.noCache = true }
}

// New returns a Model of the named Anthropic model, such as
// "claude-sonnet-4-5". Without APIKey, BaseURL or WithClient it reads
// ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (and, without a key,
// ANTHROPIC_AUTH_TOKEN, sent as a bearer token, as gateways take it);
// with none set it is made all the same, and its first request fails
// with ErrNoAPIKey.
func New(model string, opts ...Option) (*Model, error) {
	if strings.TrimSpace(model) == "" {
		return nil, errors.New("anthropic.New: give the model's name, such as claude-sonnet-4-5")
	}
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := errors.Join(cfg.errs...); err != nil {
		return nil, err
	}
	m := &Model{name: model, maxTokens: DefaultMaxTokens, thinking: cfg.thinking, cache: !cfg.noCache}
	if cfg.ttl == time.Hour {
		m.ttl = "1h"
	}
	if cfg.maxTokensExplicit {
		m.maxTokens = cfg.maxTokens
	} else if cfg.thinking.budget > 0 {
		m.maxTokens += cfg.thinking.budget
	}
	if b := cfg.thinking.budget; b > 0 && b >= m.maxTokens {
		return nil, fmt.Errorf("anthropic.New: the thinking budget (%d) must be less than max_tokens (%d): raise MaxTokens", b, m.maxTokens)
	}
	_, err := sdk.CalculateNonStreamingTimeout(m.maxTokens, sdk.Model(model), nil)
	m.wholeOK = err == nil

	if cfg.client != nil {
		m.client = *cfg.client
		return m, nil
	}
	key, base := os.Getenv("ANTHROPIC_API_KEY"), os.Getenv("ANTHROPIC_BASE_URL")
	token := "" // a bearer token, as a gateway may want in place of a key
	if cfg.apiKey != nil {
		key = *cfg.apiKey
	} else if key == "" {
		token = os.Getenv("ANTHROPIC_AUTH_TOKEN")
	}
	if cfg.baseURL != nil {
		base = *cfg.baseURL
	}
	m.noKey = key == "" && token == "" && base == ""
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("anthropic.New: the base URL %q is not an http or https URL", redactURL(base))
	}
	copts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithBaseURL(base), option.WithHTTPClient(sharedHTTPClient())}
	if key != "" {
		// x-api-key is the header the Messages API documents, and the one
		// Anthropic-compatible servers read (the SDK's WithAPIKey sends
		// the key as a bearer token).
		copts = append(copts, option.WithHeader("X-Api-Key", key))
	} else if token != "" {
		copts = append(copts, option.WithHeader("Authorization", "Bearer "+token))
	}
	m.client = sdk.NewClient(copts...)
	m.endpoint = endpointOf(u)
	return m, nil
}

// Name returns the model's name, as sent in each request.
func (m *Model) Name() string { return m.name }

// Provider returns "anthropic", the prefix the package registers: what
// an agent's telemetry reports as the model's provider.
func (m *Model) Provider() string { return "anthropic" }

// Generate sends req to the Messages API, streaming the reply when onDelta
// is not nil. The request names the Model's own model: req.Model, the
// agent's setting, is not read (an agent given a Model with
// onion.WithModel keeps the default name of onion's own wire there).
func (m *Model) Generate(ctx context.Context, req *loop.Request, onDelta func(loop.Delta)) (*loop.Response, error) {
	if m.noKey {
		return nil, &loop.ModelError{Err: ErrNoAPIKey}
	}
	model := m.name
	stream := onDelta != nil || !m.wholeOK
	body, err := m.encode(req, model, stream)
	if err != nil {
		return nil, &loop.ModelError{Err: fmt.Errorf("anthropic: writing the request: %w", err)}
	}
	h := &hint{}
	opts := []option.RequestOption{
		option.WithMaxRetries(0),
		option.WithRequestBody("application/json", body),
		option.WithMiddleware(h.middleware),
	}
	// The SDK reads the model and max_tokens of its own params for its
	// timeouts and its span; the body sent is the one written above.
	params := sdk.MessageNewParams{Model: sdk.Model(model), MaxTokens: int64(m.maxTokens)}
	if stream {
		return m.stream(ctx, params, opts, h, onDelta)
	}
	msg, err := m.client.Messages.New(ctx, params, opts...)
	if err != nil {
		return nil, m.modelError(err, h, false)
	}
	resp, err := fromMessage(msg)
	if err != nil {
		return nil, m.modelError(err, h, false)
	}
	return resp, nil
}

// sharedHTTPClient is the HTTP client of the Models' own SDK clients, one
// for all so that they share connections: the SDK's default, which
// WithoutEnvironmentDefaults leaves out, bounding the wait for a reply's
// headers (the body, a stream, may take its time).
var sharedHTTPClient = sync.OnceValue(func() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: http.DefaultTransport}
})

// endpointOf is the messages URL under the base URL u, without its query
// and credentials.
func endpointOf(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, "/") + "/v1/messages"}
	return v.String()
}

// redactURL is raw without its query and user info, which may hold
// credentials.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	return u.String()
}
