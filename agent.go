package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// An Agent is a model, its tools and its settings: Input, Run and Stream
// send one prompt through the capped model/tool loop and always end with
// one answer. An Agent holds no conversation: each of its runs starts
// afresh, so one Agent can serve many users at once. A Conversation, made
// by NewConversation, carries the history from one prompt to the next.
// An Agent is safe for use by several goroutines.
type Agent struct {
	name  string
	cfg   config
	tools *Toolset
	defs  []ToolDef // the tools as sent, built once
	model LanguageModel
	// provider is the prefix the model was named with ("anthropic" of
	// "anthropic/claude-…"), when a registered provider opened it.
	provider string
	// subs are the agents among its tools (see agentTool).
	subs []*Agent
	core *loop.Loop // the rules of the loop, driven by Run and Stream
}

// Option configures an Agent. Pass options to NewAgent among the tools.
type Option interface {
	applyAgent(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) applyAgent(c *config) error { return f(c) }

type config struct {
	model         string
	maxIterations int
	systemPrompt  string
	baseURL       string
	apiKey        string
	client        *openai.Client
	temperature   *float32
	toolTimeout   time.Duration
	maxToolOutput int
	retries       int
	backoffMin    time.Duration
	backoffMax    time.Duration
	maxRetryAfter time.Duration
	logger        *slog.Logger
	hooks         []Hooks
	instruments   []Instrument // see WithInstrument
	keepTools     bool
	strict        bool
	maxParallel   int
	toolRetries   int
	approver      func(context.Context, Call) (bool, error)
	languageModel LanguageModel // nil: the built-in Chat Completions client
	responses     responsesMode // which API the built-in client speaks
	// compactAfter and compactStrategy: see CompactAfter.
	compactAfter    int
	compactStrategy CompactStrategy
	tokenBudget     int // see TokenBudget; 0: none
	// description is the agent's, as a tool of other agents (Description).
	description string
	// As a tool of other agents: the task's type (InputType), the
	// answer's (OutputType), and the size of the caller's conversation's
	// summary its tasks start with (CallerSummary; 0: none).
	input     *paramSchema
	inputName string // the Go type of input, for signatures
	output    *answerType
	summary   int
}

func defaultConfig() config {
	model := os.Getenv("ONION_MODEL")
	if model == "" {
		model = "gpt-4o-mini"
	}
	return config{
		model:         model,
		maxIterations: 10,
		baseURL:       os.Getenv("OPENAI_BASE_URL"),
		apiKey:        os.Getenv("OPENAI_API_KEY"),
		toolTimeout:   DefaultToolTimeout,
		maxToolOutput: 64 << 10,
		retries:       3,
		backoffMin:    500 * time.Millisecond,
		backoffMax:    20 * time.Second,
		maxRetryAfter: 5 * time.Minute,
		logger:        slog.New(slog.DiscardHandler),
		maxParallel:   8,
	}
}

// Model sets the model name. The default is $ONION_MODEL, else gpt-4o-mini.
// A name whose prefix a provider package registered names that provider's
// model: "anthropic/claude-sonnet-4-5" once package anthropic is imported
// (as _ is enough), "gemini/gemini-2.5-flash" once package gemini is; the
// provider reads its key from its own environment variable. A bare name,
// or one whose prefix no imported package registered (such as
// OpenRouter's "meta-llama/…"), is an OpenAI model as before; so is one
// prefixed "openai/", which names the built-in client explicitly, with
// the agent's options ("openai/meta-llama/llama-3" asks an
// OpenAI-compatible server such as OpenRouter for "meta-llama/llama-3").
func Model(name string) Option {
	return optionFunc(func(c *config) error { c.model = name; return nil })
}

// MaxIterations caps the rounds of tool calls (default 10). After the cap
// the model is asked once more, without tools, to answer from what it has.
func MaxIterations(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("onion.MaxIterations(%d): the cap must be at least 1", n)
		}
		c.maxIterations = n
		return nil
	})
}

// SystemPrompt sets the agent's instructions. The agent adds a line saying
// that tool results are data, not orders.
func SystemPrompt(text string) Option {
	return optionFunc(func(c *config) error { c.systemPrompt = text; return nil })
}

// BaseURL sets the Chat Completions endpoint, including /v1 (default
// $OPENAI_BASE_URL, else OpenAI's). Ollama: http://localhost:11434/v1.
func BaseURL(url string) Option {
	return optionFunc(func(c *config) error { c.baseURL = url; return nil })
}

// APIKey sets the API key (default $OPENAI_API_KEY). It is never logged.
func APIKey(key string) Option {
	return optionFunc(func(c *config) error { c.apiKey = key; return nil })
}

// WithClient uses a ready go-openai client, such as one configured for
// Azure OpenAI; BaseURL and APIKey are then ignored. The agent reads its
// replies' Retry-After headers and mid-stream errors as for a client it
// builds itself. Without it, the agent's client sends through the
// connection pool every such agent shares (see CloseIdleConnections).
func WithClient(client *openai.Client) Option {
	return optionFunc(func(c *config) error { c.client = client; return nil })
}

// Temperature sets the sampling temperature.
func Temperature(t float32) Option {
	return optionFunc(func(c *config) error { c.temperature = &t; return nil })
}

// DefaultToolTimeout bounds each tool call of an agent that sets no
// ToolTimeout (and of a tool mcpserver serves, unless its ToolTimeout is
// set). Five minutes is long enough for a build, a test run or a slow
// page, and short enough that a tool that hangs — on a pipe, a lock, a
// peer that never answers, a walk of a hostile tree — frees its run
// within minutes instead of holding it, with its goroutine and what it
// holds open, forever.
const DefaultToolTimeout = 5 * time.Minute

// ToolTimeout bounds each tool call: DefaultToolTimeout (5 minutes) unless
// set. Give a longer d to an agent whose tools take longer; a d of 0 (or
// less) sets no bound at all, so that a tool that never returns holds its
// run until the run's context ends. A read cut by the timeout is an error
// the model reads; a write cut by it ends as OutcomeUnknown, since nobody
// knows whether it took effect.
func ToolTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) error { c.toolTimeout = max(d, 0); return nil })
}

// MaxToolOutput caps the bytes of one tool result sent to the model
// (default 64 KiB); longer output is cut with a marker saying how much.
func MaxToolOutput(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("onion.MaxToolOutput(%d): must be at least 1", n)
		}
		c.maxToolOutput = n
		return nil
	})
}

// Retries sets how many times a failed model request is retried (default
// 3): rate limits (429), server errors (5xx) and network errors are,
// other errors are not.
func Retries(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 0 {
			return fmt.Errorf("onion.Retries(%d): must not be negative", n)
		}
		c.retries = n
		return nil
	})
}

// RetryBackoff sets the bounds of the exponential backoff, with jitter,
// between retries of model requests and tool calls (default 500ms to 20s).
// A Retry-After header wins over it.
func RetryBackoff(min, max time.Duration) Option {
	return optionFunc(func(c *config) error {
		if min < 0 || max < min {
			return fmt.Errorf("onion.RetryBackoff(%v, %v): need 0 <= min <= max", min, max)
		}
		c.backoffMin, c.backoffMax = min, max
		return nil
	})
}

// MaxRetryAfter bounds how long the agent waits when a server's
// Retry-After asks it to wait before sending a request again (default 5
// minutes). A server asking for longer fails the request with its own
// words, instead of stalling the run.
func MaxRetryAfter(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return fmt.Errorf("onion.MaxRetryAfter(%v): must not be negative", d)
		}
		c.maxRetryAfter = d
		return nil
	})
}

// Logger logs one record per model request and per tool call. The agent
// is silent by default.
func Logger(l *slog.Logger) Option {
	return optionFunc(func(c *config) error {
		if l != nil {
			c.logger = l
		}
		return nil
	})
}

// KeepToolHistory keeps the tool calls and results of each run in its
// Conversation. By default only the prompts and answers are kept.
func KeepToolHistory() Option {
	return optionFunc(func(c *config) error { c.keepTools = true; return nil })
}

// MaxParallel bounds the read calls of one model response that run at
// once (default 8).
func MaxParallel(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("onion.MaxParallel(%d): must be at least 1", n)
		}
		c.maxParallel = n
		return nil
	})
}

// ToolRetries sets how many times a failed read, or a failed idempotent
// write, is retried (default 0). Other writes run exactly once, and a call
// whose arguments failed the check is never retried: the model must fix
// them.
func ToolRetries(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 0 {
			return fmt.Errorf("onion.ToolRetries(%d): must not be negative", n)
		}
		c.toolRetries = n
		return nil
	})
}

// Approver decides the calls that need approval. Without an approver they
// are denied; an approver's error or panic counts as no, and the call's
// ToolCall.Error says which. An approver must return when its context
// ends: the run waits for it.
func Approver(fn func(ctx context.Context, c Call) (bool, error)) Option {
	return optionFunc(func(c *config) error { c.approver = fn; return nil })
}

// Strict sends OpenAI strict schemas (every property required, optional
// ones nullable, no additional properties) with strict:true. A parameter
// type strict mode cannot express is an error at NewAgent, and so is a
// raw tool's schema keyword it cannot express (a free-form object,
// if/then, dependentRequired…); a raw schema's type lists and draft-04
// bounds are kept.
func Strict() Option {
	return optionFunc(func(c *config) error { c.strict = true; return nil })
}

// NewAgent makes an agent called name. Each item is an Option or a tool
// source: a func, a pointer to a struct (its methods are tools), a *Tool,
// a []*Tool, or another *Agent, which becomes a tool by which this agent
// hands it a task (see the README's "Agents as tools"). A Method item applies to the method of that name of every
// struct instance among the items; it is an error when none has one.
func NewAgent(name string, items ...any) (*Agent, error) {
	cfg := defaultConfig()
	var methods []methodOption
	for _, item := range items {
		if m, ok := item.(methodOption); ok {
			methods = append(methods, m)
		}
	}
	var tools, fromInstances []*Tool
	var subs []*Agent
	used := map[string]bool{}
	for i, item := range items {
		if o, ok := item.(Option); ok {
			if err := o.applyAgent(&cfg); err != nil {
				return nil, err
			}
			continue
		}
		if _, ok := item.(methodOption); ok {
			continue
		}
		if sub, ok := item.(*Agent); ok {
			if sub == nil {
				return nil, fmt.Errorf("onion.NewAgent %q: item %d: a nil *Agent", name, i)
			}
			t, err := agentTool(sub)
			if err != nil {
				return nil, fmt.Errorf("onion.NewAgent %q: item %d: %w", name, i, err)
			}
			tools = append(tools, t)
			subs = append(subs, sub)
			continue
		}
		opts, instance := methodsOf(item, methods)
		for _, o := range opts {
			used[o.(methodOption).name] = true
		}
		ts, err := ToolsFrom(item, opts...)
		if err != nil {
			return nil, fmt.Errorf("onion.NewAgent %q: item %d: %w", name, i, err)
		}
		tools = append(tools, ts...)
		if instance {
			fromInstances = append(fromInstances, ts...)
		}
	}
	for _, m := range methods {
		if !used[m.name] {
			return nil, fmt.Errorf("onion.NewAgent %q: onion.Method(%q): %s", name, m.name, noSuchMethod(m.name, fromInstances, tools))
		}
	}
	if cfg.strict {
		for i, t := range tools {
			st, err := t.strictTool()
			if err != nil {
				return nil, fmt.Errorf("onion.NewAgent %q: tool %q: %w", name, t.name, err)
			}
			tools[i] = st
		}
	}
	set, err := newToolset(tools)
	if err != nil {
		return nil, fmt.Errorf("onion.NewAgent %q: %w", name, err)
	}
	if err := checkAgents(name, subs); err != nil {
		return nil, fmt.Errorf("onion.NewAgent %q: %w", name, err)
	}
	a := &Agent{name: name, cfg: cfg, tools: set, subs: subs}
	if cfg.languageModel == nil {
		if model, ok := strings.CutPrefix(cfg.model, builtinPrefix); ok {
			a.cfg.model = model // the built-in client, with the agent's options
		} else if open, model, ok := loop.Lookup(cfg.model); ok {
			m, err := open(model)
			if err != nil {
				return nil, fmt.Errorf("onion.NewAgent %q: model %q: %w", name, cfg.model, err)
			}
			a.cfg.languageModel, a.cfg.model, a.provider = m, model, cfg.model[:len(cfg.model)-len(model)-1]
		}
	} else if m, ok := cfg.languageModel.(interface{ Name() string }); ok && m.Name() != "" {
		// A provider's model given with WithModel knows its name: the
		// requests, the events and the telemetry carry it.
		a.cfg.model = m.Name()
	}
	a.defs = make([]ToolDef, len(set.tools))
	for i, t := range set.tools {
		a.defs[i] = t.def()
	}
	core, err := loop.New(a.loopConfig())
	if err != nil {
		return nil, fmt.Errorf("onion.NewAgent %q: %w", name, err)
	}
	a.core = core
	a.model = a.cfg.languageModel
	if tc, ok := a.model.(loop.ToolChecker); ok {
		if err := tc.CheckTools(a.defs); err != nil {
			return nil, fmt.Errorf("onion.NewAgent %q: %w", name, err)
		}
	}
	if a.model == nil && cfg.client == nil && cfg.apiKey == "" && cfg.baseURL == "" {
		a.model = ModelFunc(noModel)
	}
	if a.model == nil {
		if a.model, err = cfg.builtinModel(); err != nil {
			return nil, fmt.Errorf("onion.NewAgent %q: %w", name, err)
		}
	}
	return a, nil
}

// loopConfig is the agent as its loop sees it.
func (a *Agent) loopConfig() loop.Config {
	c := loop.Config{Model: a.cfg.model, SystemPrompt: a.cfg.systemPrompt, Temperature: a.cfg.temperature,
		MaxIterations: a.cfg.maxIterations, MaxParallel: a.cfg.maxParallel, ToolRetries: a.cfg.toolRetries,
		MaxOutput: a.cfg.maxToolOutput, BackoffMin: a.cfg.backoffMin, BackoffMax: a.cfg.backoffMax,
		CompactAfter: a.cfg.compactAfter, CompactStrategy: a.cfg.compactStrategy,
		TokenBudget: a.cfg.tokenBudget}
	for i, t := range a.tools.tools {
		c.Tools = append(c.Tools, loop.Tool{Def: a.defs[i], Intent: loop.Intent(t.intent), Idempotent: t.idempotent,
			Approval: t.approve || t.approveIf != nil})
	}
	return c
}

// LanguageModel returns the model the agent sends its requests to: the one
// given with WithModel, or the built-in Chat Completions client. Each
// Generate is one attempt; Run and Stream add the retries.
func (a *Agent) LanguageModel() LanguageModel { return a.model }

// Name returns the agent's name.
func (a *Agent) Name() string { return a.name }

// Tools returns the agent's tools.
func (a *Agent) Tools() *Toolset { return a.tools }

// DescribeTools describes the agent's tools for people.
func (a *Agent) DescribeTools() []ToolInfo {
	infos := make([]ToolInfo, len(a.tools.tools))
	for i, t := range a.tools.tools {
		infos[i] = ToolInfo{Name: t.name, Signature: t.signature, Description: t.description}
	}
	return infos
}

// Input sends prompt through the loop, with no history, and returns the
// answer.
func (a *Agent) Input(ctx context.Context, prompt string) (string, error) {
	r, err := a.Run(ctx, prompt)
	if err != nil {
		return "", err
	}
	return r.Output, nil
}

// Run sends prompt through the loop, with no history, and returns the
// answer and what happened on the way. When ctx ends, Run returns promptly with the partial
// Result (StopReason StopCanceled) and the context's error, wrapped.
func (a *Agent) Run(ctx context.Context, prompt string) (*Result, error) {
	res, _, err := a.run(ctx, nil, nil, prompt, nil)
	return res, err
}

// Stream runs prompt like Run and yields events as they happen: text
// deltas of the model's replies, tool calls started and finished,
// iteration boundaries, and a last EventDone carrying the Result. An error
// ends the sequence. Breaking out of the loop cancels the run.
func (a *Agent) Stream(ctx context.Context, prompt string) iter.Seq2[Event, error] {
	return a.stream(ctx, nil, nil, prompt, nil)
}

// stream runs prompt after history (prev: see run), yielding its events;
// once the run is over, keep gets what the conversation keeps of it.
func (a *Agent) stream(ctx context.Context, history []Message, prev *loop.State, prompt string, keep func(runTurn)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		var turn runTurn // written by the run, read once it is over
		streamRun(ctx,
			func(ctx context.Context, events chan<- Event) (*Result, error) {
				res, t, err := a.run(ctx, history, prev, prompt, events)
				turn = t
				return res, err
			},
			func(res *Result, err error) (Event, error) {
				if keep != nil {
					keep(turn)
				}
				return Event{Kind: EventDone, Result: res}, err
			})(yield)
	}
}

// streamRun runs run, which sends its events to the channel it is given,
// and yields them as they come; the last is what done makes of the run's
// Result and error. Breaking out of the loop cancels the run.
func streamRun(ctx context.Context, run func(context.Context, chan<- Event) (*Result, error), done func(*Result, error) (Event, error)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events := make(chan Event)
		var res *Result
		var err error
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			res, err = run(ctx, events)
		}()
		stopped := false
		for {
			select {
			case e := <-events:
				if !stopped && !yield(e, nil) {
					stopped = true
					cancel()
				}
			case <-finished:
				if !stopped {
					yield(done(res, err))
				}
				return
			}
		}
	}
}

// Close closes every tool resource that is an io.Closer (struct instances
// given as tools, and WithCloser resources), each once.
func (a *Agent) Close() error {
	var errs []error
	seen := map[io.Closer]bool{}
	for _, t := range a.tools.tools {
		if t.closer == nil {
			continue
		}
		if reflect.TypeOf(t.closer).Comparable() {
			if seen[t.closer] {
				continue
			}
			seen[t.closer] = true
		}
		if err := t.closer.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close tools of %q: %w", t.name, err))
		}
	}
	return errors.Join(errs...)
}

// Definitions returns the tools as the agent sends them to the model
// (strict schemas when the agent is Strict).
func (a *Agent) Definitions() []openai.Tool {
	out := make([]openai.Tool, len(a.defs))
	for i, d := range a.defs {
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: d.Name, Description: d.Description, Parameters: json.RawMessage(slices.Clone(d.Parameters)), Strict: d.Strict}}
	}
	return out
}

// methodsOf returns the Method options among methods that name a method
// of item, the options NewAgent gives ToolsFrom with it, and whether item
// is a struct instance (a pointer to a struct), the only kind Method
// applies to.
func methodsOf(item any, methods []methodOption) ([]ToolOption, bool) {
	if _, ok := item.(*Tool); ok {
		return nil, false
	}
	t := reflect.TypeOf(item)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	var opts []ToolOption
	for _, m := range methods {
		if _, ok := t.MethodByName(m.name); ok {
			opts = append(opts, m)
		}
	}
	return opts, true
}

// noSuchMethod says why the Method called name given to NewAgent matched
// nothing: the tool of that method was made before (a *Tool among tools),
// or no instance has it, listing the tool methods of the instances.
func noSuchMethod(name string, fromInstances, tools []*Tool) string {
	for _, t := range tools {
		if o, ok := t.origin.(toolOrigin); ok && o.method == name && !slices.Contains(fromInstances, t) {
			return fmt.Sprintf("the tool of (%s).%s is already made; give Method to the onion.ToolsFrom call that made it, or the instance itself to NewAgent", o.typ, name)
		}
	}
	var names []string
	for _, t := range fromInstances {
		if o, ok := t.origin.(toolOrigin); ok && o.typ != nil {
			names = append(names, "("+o.typ.String()+")."+o.method)
		}
	}
	if len(names) == 0 {
		return "no struct instance is given, and Method applies to the methods of one"
	}
	return "no struct instance given has a tool method of that name; their tool methods are " + strings.Join(names, ", ")
}
