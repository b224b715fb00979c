package onion

import (
	"context"
	"net/url"
	"time"
)

// This file is the seam through which tracing and metrics watch a run
// (package telemetry is the one onion ships): the live runtime tells an
// Instrument when a run, a model request and a tool call start and end,
// and runs what follows under the context the Instrument returns, so that
// a span it starts is the parent of whatever the model client or the tool
// does.

// An Instrument watches an agent's runs. Each Start method returns the
// context the work it announces runs under (the tool's own ctx, for
// StartTool); the matching End method gets that context back. The runtime
// calls the methods of one run from one goroutine, in order; the methods
// of different runs may be called at once.
type Instrument interface {
	// StartRun is called when a run starts, EndRun when it has ended,
	// before Run returns.
	StartRun(ctx context.Context, run RunInfo) context.Context
	EndRun(ctx context.Context, res *Result, err error)
	// StartModel is called before each model request (its retries
	// included), EndModel when it has a reply or has failed for good.
	StartModel(ctx context.Context, req *Request) context.Context
	// RetryModel is called when an attempt of the request failed and it
	// is sent again after wait; attempt counts from 1.
	RetryModel(ctx context.Context, attempt int, err error, wait time.Duration)
	EndModel(ctx context.Context, resp *Response, err error)
	// StartTool is called when a call starts (its approval first, when
	// it needs one), EndTool when it has its outcome. A call that never
	// starts (an unknown tool, a skipped call) gets both at its end.
	StartTool(ctx context.Context, c ToolCall) context.Context
	EndTool(ctx context.Context, c ToolCall)
}

// RunInfo describes a run to an Instrument. Its slices are the agent's
// own: read them, do not change them. The prompts are content: an
// Instrument that exports them should let the user opt in.
type RunInfo struct {
	Agent        string    // the agent's name
	RunID        string    // the run's ID
	Model        string    // the model asked for
	Provider     string    // "openai" for the built-in client, a registered provider's prefix ("anthropic", "gemini"), what a LanguageModel given with WithModel says with a Provider method, else ""
	Server       string    // the host (and port) of the endpoint, when the agent knows it
	SystemPrompt string    // the agent's instructions
	Prompt       string    // the run's prompt
	Tools        []ToolDef // the tools as sent to the model
}

// WithInstrument has the agent report its runs to in (see Instrument).
// Several instruments are called in the order given.
func WithInstrument(in Instrument) Option {
	return optionFunc(func(c *config) error {
		if in != nil {
			c.instruments = append(c.instruments, in)
		}
		return nil
	})
}

// runInfo is what the agent tells its instruments of the run runID of
// prompt (see drive.RunInfo).
func (a *Agent) runInfo(runID, prompt string) RunInfo {
	info := RunInfo{Agent: a.name, RunID: runID, Model: a.cfg.model, Provider: a.provider, SystemPrompt: a.cfg.systemPrompt, Prompt: prompt, Tools: a.defs}
	// A provider's model given with WithModel names its provider (the
	// provider packages' Model types do; NewAgent took its name).
	if p, ok := a.cfg.languageModel.(interface{ Provider() string }); ok && info.Provider == "" {
		info.Provider = p.Provider()
	}
	if a.cfg.languageModel == nil {
		info.Provider = "openai"
		switch {
		case a.cfg.client != nil:
		case a.cfg.baseURL == "":
			info.Server = "api.openai.com"
		default:
			if u, err := url.Parse(a.cfg.baseURL); err == nil {
				info.Server = u.Host
			}
		}
	}
	return info
}

// A RunAttacher is an Instrument that can watch the model requests of a
// run whose StartRun was called elsewhere: a durable run's requests are
// activities, on any worker, whose context carries only the run's trace
// context. AttachRun returns the context the Start methods that follow
// get, holding what StartRun keeps of the run (the provider, the server),
// without starting anything.
type RunAttacher interface {
	AttachRun(ctx context.Context, run RunInfo) context.Context
}

// instrument is the agent's instruments as one (see drive.Instrument).
func (a *Agent) instrument() Instrument {
	if len(a.cfg.instruments) == 0 {
		return nil
	}
	return instruments(a.cfg.instruments)
}

// instruments is several instruments as one.
type instruments []Instrument

func (ins instruments) StartRun(ctx context.Context, run RunInfo) context.Context {
	for _, in := range ins {
		ctx = in.StartRun(ctx, run)
	}
	return ctx
}

func (ins instruments) AttachRun(ctx context.Context, run RunInfo) context.Context {
	for _, in := range ins {
		if at, ok := in.(RunAttacher); ok {
			ctx = at.AttachRun(ctx, run)
		}
	}
	return ctx
}

func (ins instruments) EndRun(ctx context.Context, res *Result, err error) {
	for i := len(ins) - 1; i >= 0; i-- {
		ins[i].EndRun(ctx, res, err)
	}
}

func (ins instruments) StartModel(ctx context.Context, req *Request) context.Context {
	for _, in := range ins {
		ctx = in.StartModel(ctx, req)
	}
	return ctx
}

func (ins instruments) RetryModel(ctx context.Context, attempt int, err error, wait time.Duration) {
	for _, in := range ins {
		in.RetryModel(ctx, attempt, err, wait)
	}
}

func (ins instruments) EndModel(ctx context.Context, resp *Response, err error) {
	for i := len(ins) - 1; i >= 0; i-- {
		ins[i].EndModel(ctx, resp, err)
	}
}

func (ins instruments) StartTool(ctx context.Context, c ToolCall) context.Context {
	for _, in := range ins {
		ctx = in.StartTool(ctx, c)
	}
	return ctx
}

func (ins instruments) EndTool(ctx context.Context, c ToolCall) {
	for i := len(ins) - 1; i >= 0; i-- {
		ins[i].EndTool(ctx, c)
	}
}

// The runtime's calls into the instruments, each a no-op without one.

func (r *liveRun) startRun(prompt string) {
	for _, in := range r.instruments() {
		r.ctx = in.StartRun(r.ctx, r.a.runInfo(r.st.RunID, prompt))
	}
}

func (r *liveRun) endRun(res *Result, err error) {
	ins := r.instruments()
	for i := len(ins) - 1; i >= 0; i-- {
		ins[i].EndRun(r.ctx, res, err)
	}
}

func (r *liveRun) startModel(req *Request) context.Context {
	ctx := r.ctx
	for _, in := range r.instruments() {
		ctx = in.StartModel(ctx, req)
	}
	return ctx
}

func (r *liveRun) endModel(ctx context.Context, resp *Response, err error) {
	ins := r.instruments()
	for i := len(ins) - 1; i >= 0; i-- {
		ins[i].EndModel(ctx, resp, err)
	}
}

func (a *Agent) retryModel(ctx context.Context, attempt int, err error, wait time.Duration) {
	for _, in := range a.cfg.instruments {
		in.RetryModel(ctx, attempt, err, wait)
	}
}

// toolCtx is the context call id runs under: its tool's span, if any.
func (r *liveRun) toolCtx(id string) context.Context {
	if ctx, ok := r.tools[id]; ok {
		return ctx
	}
	return r.ctx
}

func (r *liveRun) startTool(tc ToolCall) {
	if len(r.instruments()) == 0 {
		return
	}
	ctx := r.ctx
	for _, in := range r.instruments() {
		ctx = in.StartTool(ctx, tc)
	}
	if r.tools == nil {
		r.tools = map[string]context.Context{}
	}
	r.tools[tc.ID] = ctx
}

func (r *liveRun) endTool(tc ToolCall) {
	if len(r.instruments()) == 0 {
		return
	}
	ctx, ok := r.tools[tc.ID]
	if !ok {
		r.startTool(tc)
		ctx = r.tools[tc.ID]
	}
	delete(r.tools, tc.ID)
	ins := r.instruments()
	for i := len(ins) - 1; i >= 0; i-- {
		ins[i].EndTool(ctx, tc)
	}
}
