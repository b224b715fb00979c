package devui

import (
	"context"
	"encoding/json"
	"time"

	"github.com/onionkit/onion"
)

// instrument is the UI's onion.Instrument: it records each model request
// of a run the UI started, its reply, its latency and its tokens, and
// the JSON of both. The tool calls come from the run's events instead.
type instrument struct{ u *UI }

// stepKey finds a request's modelStep in the context StartModel returns.
type stepKey struct{}

func scopeOf(ctx context.Context) *scope {
	sc, _ := ctx.Value(scopeKey{}).(*scope)
	return sc
}

// StartRun notes the path of agents of the run: a sub-agent's run starts
// in its caller's tool call, whose context holds the caller's path.
func (in instrument) StartRun(ctx context.Context, info onion.RunInfo) context.Context {
	sc := scopeOf(ctx)
	if sc == nil {
		return ctx
	}
	path := info.Agent
	if sc.agents != "" {
		path = sc.agents + "/" + info.Agent
	}
	return context.WithValue(ctx, scopeKey{}, &scope{ui: sc.ui, run: sc.run, agents: path, depth: sc.depth + 1})
}

func (instrument) EndRun(context.Context, *onion.Result, error) {}

// StartModel adds the request to its run's timeline.
func (in instrument) StartModel(ctx context.Context, req *onion.Request) context.Context {
	sc := scopeOf(ctx)
	if sc == nil {
		return ctx
	}
	u, r := in.u, sc.run
	b, err := json.Marshal(req)
	if err == nil {
		b = u.scrub.json(b)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	st := &modelStep{Kind: "model", Step: len(r.steps) + 1, Agent: sc.agents, Depth: sc.depth, Model: u.scrub.text(req.Model),
		Status: "waiting", Started: time.Now(), scrub: streamScrub{s: u.scrub}, JSON: "dropped"}
	i, ok := r.addItem(st)
	if !ok {
		return ctx
	}
	st.Index = i
	r.steps = append(r.steps, st)
	if sc.depth == 1 {
		r.top = st
	}
	if err == nil && u.room(r, len(b)) {
		st.request, st.JSON = b, "kept"
		r.bytes += len(b)
	}
	u.publish("model", itemEvent{r.ID, st})
	return context.WithValue(ctx, stepKey{}, st)
}

// RetryModel notes a failed attempt that is sent again.
func (in instrument) RetryModel(ctx context.Context, attempt int, err error, wait time.Duration) {
	sc, st := scopeOf(ctx), stepOf(ctx)
	if sc == nil || st == nil {
		return
	}
	u := in.u
	u.mu.Lock()
	defer u.mu.Unlock()
	st.Retries = attempt
	st.Error = u.keep(sc.run, err.Error(), maxShown)
	u.publish("model", itemEvent{sc.run.ID, st})
}

// EndModel records the reply: its text, tokens, latency, why it stopped.
func (in instrument) EndModel(ctx context.Context, resp *onion.Response, err error) {
	sc, st := scopeOf(ctx), stepOf(ctx)
	if sc == nil || st == nil {
		return
	}
	u, r := in.u, sc.run
	var b []byte
	if resp != nil {
		if j, jerr := json.Marshal(resp); jerr == nil {
			b = u.scrub.json(j)
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	st.ended = true
	st.LatencyMS = ms(time.Since(st.Started))
	if err != nil || resp == nil {
		st.Status = "failed"
		if err != nil {
			st.Error = u.keep(r, err.Error(), maxShown)
		}
		u.publish("model", itemEvent{r.ID, st})
		return
	}
	st.Status, st.Error = "done", ""
	st.Usage = resp.Usage
	st.FinishReason = u.scrub.text(resp.FinishReason)
	st.ToolCalls = len(resp.Message.ToolCalls)
	r.bytes -= len(st.Text)
	st.Text = u.keep(r, resp.Message.Content, maxReplyText)
	// room may drop this request's own JSON: a reply is kept with it.
	if b != nil && st.request != nil && u.room(r, len(b)) && st.request != nil {
		st.reply = b
		r.bytes += len(b)
	} else if st.request != nil {
		r.bytes -= len(st.request)
		st.request, st.JSON = nil, "dropped"
	}
	u.addUsage(st.Model, resp.Usage)
	u.publish("model", itemEvent{r.ID, st})
	u.publish("usage", u.usageView())
}

func (instrument) StartTool(ctx context.Context, _ onion.ToolCall) context.Context { return ctx }

func (instrument) EndTool(context.Context, onion.ToolCall) {}

func stepOf(ctx context.Context) *modelStep {
	st, _ := ctx.Value(stepKey{}).(*modelStep)
	return st
}
