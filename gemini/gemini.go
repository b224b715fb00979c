package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"google.golang.org/genai"

	"github.com/onionkit/onion/loop"
)

// Prefix is the prefix this package registers its models under:
// "gemini/gemini-2.5-flash" names the model "gemini-2.5-flash".
const Prefix = "gemini"

func init() {
	loop.Register(Prefix, func(model string) (loop.LanguageModel, error) {
		return New(model)
	})
}

// ErrNoAPIKey is the error of a request of a Model that has neither an
// API key nor a base URL: it says what to set.
var ErrNoAPIKey = errors.New("gemini: no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) to use the Gemini API, " +
	"or GEMINI_BASE_URL for a server that speaks it (such as oniontest's)")

// Model is a Gemini model of the Gemini Developer API, reached through
// Google's genai client: an onion LanguageModel. It is safe for
// concurrent use.
type Model struct {
	name    string
	cfg     config
	client  *genai.Client // nil when there is neither a key nor a base URL
	base    string        // the base URL requests go to, for errors
	schemas schemaCache
}

// Option configures a Model.
type Option func(*config)

type config struct {
	apiKey, baseURL string
	client          *genai.Client
	httpClient      *http.Client
	thinkingBudget  *int32
	thinkingLevel   string
	includeThoughts bool
	maxOutputTokens int32
	imagesInside    *bool // nil: by the model's name
}

// APIKey sets the API key; the default is $GEMINI_API_KEY, then
// $GOOGLE_API_KEY. It is sent in the x-goog-api-key header, and never
// written into an error.
func APIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// BaseURL sets the URL requests go to instead of
// https://generativelanguage.googleapis.com/; the default is
// $GEMINI_BASE_URL when set. With a base URL and no key, requests carry
// no key.
func BaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithClient makes the Model send its requests through c, a client the
// program made itself; APIKey, BaseURL and HTTPClient are then ignored.
func WithClient(c *genai.Client) Option { return func(cfg *config) { cfg.client = c } }

// HTTPClient sets the HTTP client requests go through; the default is
// http.DefaultClient's transport.
func HTTPClient(c *http.Client) Option { return func(cfg *config) { cfg.httpClient = c } }

// ThinkingBudget sets how many tokens the model may think for (Gemini
// 2.5: 0 turns thinking off where the model allows it, -1 lets the
// model decide).
func ThinkingBudget(tokens int) Option {
	return func(c *config) { t := int32(max(min(tokens, 1<<30), -1)); c.thinkingBudget = &t }
}

// ThinkingLevel sets how hard the model thinks, for models that take a
// level rather than a budget (Gemini 3: "low", "high").
func ThinkingLevel(level string) Option {
	return func(c *config) { c.thinkingLevel = strings.ToUpper(level) }
}

// IncludeThoughts asks for the model's thought summaries: they come back
// as the reply's Reasoning, and streamed as Delta.Reasoning.
func IncludeThoughts() Option { return func(c *config) { c.includeThoughts = true } }

// MaxOutputTokens caps the tokens of each reply; a reply cut by it ends
// with finish reason "MAX_TOKENS" (Response.Cut).
func MaxOutputTokens(n int) Option {
	return func(c *config) { c.maxOutputTokens = int32(max(min(n, 1<<30), 0)) }
}

// ImagesInFunctionResponse says where the images a tool returned go: in
// the function response's own parts (true), as Gemini 3 takes them, or
// as inline data parts after the function responses of the same turn
// (false), as earlier models need. The default is by the model's name:
// false for gemini-1.x and gemini-2.x, true for any other.
func ImagesInFunctionResponse(inside bool) Option {
	return func(c *config) { c.imagesInside = &inside }
}

// New returns the Gemini model called name ("gemini-2.5-flash"), on the
// Gemini Developer API. Without an API key and a base URL it still
// returns a Model, whose requests fail with ErrNoAPIKey.
func New(name string, opts ...Option) (*Model, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, errors.New("gemini.New: no model name; give one such as \"gemini-2.5-flash\"")
	}
	m := &Model{name: name}
	for _, o := range opts {
		o(&m.cfg)
	}
	if m.cfg.client != nil {
		m.client = m.cfg.client
		m.base = m.client.ClientConfig().HTTPOptions.BaseURL
		return m, nil
	}
	key := m.cfg.apiKey
	if key == "" {
		key = os.Getenv("GEMINI_API_KEY")
	}
	if key == "" {
		key = os.Getenv("GOOGLE_API_KEY")
	}
	base := m.cfg.baseURL
	if base == "" {
		base = os.Getenv("GEMINI_BASE_URL")
	}
	if key == "" && base == "" {
		return m, nil
	}
	hc := m.cfg.httpClient
	if hc == nil {
		hc = http.DefaultClient
	}
	t := &transport{base: hc.Transport, key: key}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	wrapped := *hc
	wrapped.Transport = t
	cc := &genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: key, HTTPClient: &wrapped,
		HTTPOptions: genai.HTTPOptions{BaseURL: base}}
	if key == "" {
		// genai wants a key for the Gemini API; the transport takes this
		// one off every request.
		cc.APIKey = placeholderKey
	}
	c, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, fmt.Errorf("gemini.New %q: %s", name, redactKey(err.Error(), key))
	}
	m.client = c
	m.base = c.ClientConfig().HTTPOptions.BaseURL
	return m, nil
}

// Name returns the model's name, as given to New.
func (m *Model) Name() string { return m.name }

// Provider returns "gemini", the prefix the package registers: what an
// agent's telemetry reports as the model's provider (gen_ai.provider.name
// gcp.gemini).
func (m *Model) Provider() string { return Prefix }

// Generate sends req to the model, streaming when onDelta is not nil
// (genai's GenerateContentStream: text as Delta.Text, thoughts as
// Delta.Reasoning). Every failure is a *loop.ModelError.
func (m *Model) Generate(ctx context.Context, req *loop.Request, onDelta func(loop.Delta)) (resp *loop.Response, err error) {
	if m.client == nil {
		return nil, &loop.ModelError{Err: ErrNoAPIKey}
	}
	// The Model's own name: a request's Model is the agent's, which is
	// another provider's default when the Model came by WithModel.
	model := m.name
	contents, cfg, err := m.build(model, req)
	if err != nil {
		return nil, &loop.ModelError{Err: fmt.Errorf("gemini: %w", err)}
	}
	x := &exchange{}
	ctx = context.WithValue(ctx, exchangeKey{}, x)
	defer func() {
		// genai's converters panic on some malformed replies (a null
		// candidate, found by FuzzReply): a server's bytes must not
		// bring the program down.
		if p := recover(); p != nil {
			resp, err = nil, m.failure(ctx, x, model, onDelta != nil, fmt.Errorf("the reply is malformed: genai: %v", p))
		}
	}()
	if onDelta == nil {
		resp, err := m.client.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			return nil, m.failure(ctx, x, model, false, err)
		}
		out, err := reply(resp)
		if err != nil {
			return nil, m.failure(ctx, x, model, false, err)
		}
		return out, nil
	}
	var acc stream
	for chunk, err := range m.client.Models.GenerateContentStream(ctx, model, contents, cfg) {
		if err != nil {
			return nil, m.failure(ctx, x, model, true, err)
		}
		acc.add(chunk, onDelta)
	}
	out, err := acc.response()
	if err != nil {
		return nil, m.failure(ctx, x, model, true, err)
	}
	return out, nil
}
