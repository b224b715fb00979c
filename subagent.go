package onion

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/onionkit/onion/loop"
)

// This file is agents as tools: an *Agent among NewAgent's items is a tool
// of the agent being made, by which that agent hands a task to the other
// and reads its answer.

// MaxAgentDepth bounds how deeply agents may be tools of agents: a lead
// whose tool is an agent whose tool is an agent is three deep. NewAgent
// refuses a deeper one, naming the path.
const MaxAgentDepth = 4

// agentSchema is the arguments of an agent's tool: the task, as text.
const agentSchema = `{"type":"object","properties":{"task":{"type":"string","description":"The whole task, with everything the agent needs to know: it sees nothing of this conversation."}},"required":["task"],"additionalProperties":false}`

// agentTool is the tool by which an agent hands a task to sub: a fresh run
// of sub with its own tools, limits and model, none of the caller's
// history. Its intent is the strongest of sub's tools', since a sub-agent
// that can write is a write; it asks no approval itself, since each call
// inside it that needs one is asked about, once, with the path of agents.
func agentTool(sub *Agent) (*Tool, error) {
	if !toolNameRE.MatchString(sub.name) {
		return nil, fmt.Errorf("agent %q cannot be a tool: a tool's name is 1 to 64 letters, digits, _ or -; give the agent such a name", sub.name)
	}
	desc := sub.cfg.description
	if desc == "" {
		desc = defaultAgentDescription(sub)
	}
	run := func(ctx context.Context, args string) (any, error) {
		summary, _ := ctx.Value(callerSummaryKey{}).(string)
		task, err := sub.subTask(ctx, args, summary)
		if err != nil {
			return nil, err
		}
		return sub.runAsTool(ctx, task)
	}
	opts := []ToolOption{strongestIntent(sub), Description(desc), NoApproval()}
	var t *Tool
	if sub.cfg.input != nil {
		cfg := toolConfig{name: sub.name}
		for _, o := range opts {
			o.applyTool(&cfg)
		}
		var err error
		if t, err = newTool(cfg, sub.cfg.input, "agent "+strconv.Quote(sub.name)); err != nil {
			return nil, err
		}
		t.invoke = run
	} else {
		var err error
		t, err = NewRawTool(sub.name, json.RawMessage(agentSchema), func(ctx context.Context, args json.RawMessage) (any, error) {
			return run(ctx, string(args))
		}, opts...)
		if err != nil {
			return nil, err
		}
	}
	t.origin = sub
	t.sub = sub
	in, out := "string", "string"
	if sub.cfg.input != nil {
		in = sub.cfg.inputName
	}
	if sub.cfg.output != nil {
		out = sub.cfg.output.goType.String()
	}
	t.signature = sub.name + "(task " + in + ") " + out
	return t, nil
}

// defaultAgentDescription says what an agent given no Description is for:
// its name and its tools.
func defaultAgentDescription(sub *Agent) string {
	names := make([]string, 0, len(sub.tools.tools))
	for _, t := range sub.tools.tools {
		names = append(names, t.name)
	}
	if len(names) == 0 {
		return fmt.Sprintf("Hands a task to the agent %s, which answers it in text.", sub.name)
	}
	return fmt.Sprintf("Hands a task to the agent %s, which works on it with its tools (%s) and answers in text.", sub.name, strings.Join(names, ", "))
}

// strongestIntent is the intent of an agent as a tool: Delete when any of
// its tools deletes, else Write when any writes, else Read.
func strongestIntent(a *Agent) Intent {
	in := Read
	for _, t := range a.tools.tools {
		switch t.intent {
		case Delete:
			return Delete
		case Write:
			in = Write
		}
	}
	return in
}

// checkAgents refuses sub-agents that would make the agent name too deep
// a tree: a path longer than MaxAgentDepth, or an agent's name found again
// below it (a cycle by name, "A → B → A", which would make the path an
// approval names ambiguous). Agents are made bottom up and never change,
// so two agents that include each other cannot be built; a name can.
func checkAgents(name string, subs []*Agent) error {
	var walk func(path []string, a *Agent) error
	walk = func(path []string, a *Agent) error {
		path = append(path, a.name)
		if slices.Contains(path[:len(path)-1], a.name) {
			return fmt.Errorf("agents include each other: %s; an agent cannot be its own tool, directly or through others", strings.Join(path, " → "))
		}
		if len(path) > MaxAgentDepth {
			return fmt.Errorf("agents nest %d deep, more than MaxAgentDepth (%d): %s", len(path), MaxAgentDepth, strings.Join(path, " → "))
		}
		for _, s := range a.subs {
			if err := walk(path, s); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range subs {
		if err := walk([]string{name}, s); err != nil {
			return err
		}
	}
	return nil
}

// runKey finds the live run a tool call belongs to, in its context.
type runKey struct{}

// parentRun is what a sub-run inherits from the run whose tool started it.
type parentRun struct {
	path     []string                                        // the agents from the outermost down to the caller
	approver func(ctx context.Context, c Call) (bool, error) // the outermost approver there is
	hooks    []Hooks                                         // the callers' hooks, nearest first
	events   chan<- Event                                    // the outermost Stream's, nil for Run
	usage    *subUsage                                       // where the sub-run's usage goes
	// instruments are the caller's, for a sub-agent that has none of its
	// own: its spans are then children of the caller's tool span.
	instruments []Instrument
}

// instruments are the run's instruments: its agent's, else its caller's.
func (r *liveRun) instruments() []Instrument {
	if len(r.a.cfg.instruments) == 0 && r.parent != nil {
		return r.parent.instruments
	}
	return r.a.cfg.instruments
}

// subUsage collects the usage of a run's sub-runs, by path. Sub-runs end
// on their calls' goroutines, hence the mutex.
type subUsage struct {
	mu      sync.Mutex
	byAgent map[string]Usage
}

// add adds a sub-run of the agent at path: its usage, or its own
// breakdown by when it handed tasks on in turn.
func (s *subUsage) add(path string, u Usage, by map[string]Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byAgent = loop.AddSubRun(s.byAgent, path, u, by)
}

// sum is the usage of every sub-run, by path.
func (s *subUsage) sum() map[string]Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.byAgent)
}

// inherit makes r a sub-run of parent (nothing when parent is nil): what
// every tool event of the run reports, the path and the hooks, is worked
// out here once, not per event.
func (r *liveRun) inherit(parent *parentRun) {
	if parent == nil {
		return
	}
	r.parent = parent
	r.agents = slices.Clip(append(slices.Clone(parent.path), r.a.name)) // an append to Call.Agents copies
	r.subHooks = append(slices.Clone(r.a.cfg.hooks), parent.hooks...)
}

// path is the agents from the outermost run down to this one's agent.
// The caller must not change it.
func (r *liveRun) path() []string {
	if r.parent == nil {
		return []string{r.a.name}
	}
	return r.agents
}

// approver is the approver of the run's calls: the outermost caller's,
// else the agent's own.
func (r *liveRun) approver() func(ctx context.Context, c Call) (bool, error) {
	if r.parent != nil && r.parent.approver != nil {
		return r.parent.approver
	}
	return r.a.cfg.approver
}

// hooks are the agent's hooks, then its callers'.
func (r *liveRun) hooks() []Hooks {
	if r.parent == nil {
		return r.a.cfg.hooks
	}
	return r.subHooks
}

// runAsTool runs the task as a sub-run of the run whose tool call ctx is,
// and returns its answer for the caller's model to read.
func (a *Agent) runAsTool(ctx context.Context, task string) (string, error) {
	caller, _ := ctx.Value(runKey{}).(*liveRun)
	var parent *parentRun
	if caller != nil {
		parent = &parentRun{path: caller.path(), approver: caller.approver(), hooks: caller.hooks(),
			events: caller.events, usage: &caller.subs, instruments: caller.instruments()}
		if caller.parent != nil && parent.events == nil {
			parent.events = caller.parent.events
		}
	}
	var ar *answerRun
	if a.cfg.output != nil {
		ar = &answerRun{typ: a.cfg.output}
	}
	res, _, err := a.runIn(ctx, nil, nil, task, nil, ar, parent)
	if res != nil && parent != nil {
		parent.usage.add(strings.Join(append(slices.Clone(parent.path), a.name), "/"), res.Usage, res.ByAgent)
	}
	if err != nil {
		return "", fmt.Errorf("agent %s: %w", a.name, err)
	}
	if !res.StopReason.Answered() {
		return "", fmt.Errorf("agent %s stopped (%s): %s", a.name, res.StopReason, res.Output)
	}
	out, err := a.subOutput(ar, res.Output)
	if err != nil {
		return "", fmt.Errorf("agent %s: %w", a.name, err)
	}
	return out, nil
}

// callerSummaryKey is the context key of the summary of the
// conversation of the run whose call of an agent given as a tool the
// context is, when that agent asks for one (CallerSummary).
type callerSummaryKey struct{}

// callerSummary is ctx with the summary of the run's conversation so far,
// for the call of t when t is an agent that starts its tasks with one.
// The driving goroutine calls it, which alone writes the run's messages.
func (r *liveRun) callerSummary(ctx context.Context, t *Tool) context.Context {
	if t.sub == nil || t.sub.cfg.summary == 0 {
		return ctx
	}
	return context.WithValue(ctx, callerSummaryKey{}, t.sub.summaryFor(r.st.Messages))
}
