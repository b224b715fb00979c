package temporal

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
)

// This file is the worker's side: which agents it serves, and the
// registration of the workflow and the activities under their names.

// The names the workflow and activities are registered under.
const (
	// WorkflowName is the workflow type of a durable run.
	WorkflowName = "onion.Run"

	modelActivity    = "onion.Model"
	toolActivity     = "onion.Tool"
	approvalActivity = "onion.NeedsApproval"
)

// runtime is what one worker serves: agents by name.
type runtime struct {
	agents map[string]*onion.Agent
}

func newRuntime(agents []*onion.Agent) (*runtime, error) {
	if len(agents) == 0 {
		return nil, errors.New("temporal: give at least one agent")
	}
	rt := &runtime{agents: make(map[string]*onion.Agent, len(agents))}
	for i, a := range agents {
		if a == nil {
			return nil, fmt.Errorf("temporal: agent %d is nil", i)
		}
		if err := rt.add(a); err != nil {
			return nil, err
		}
	}
	return rt, nil
}

// add serves a and, under their own names, the agents it was given as
// tools, whose runs are child workflows of its runs. An agent met again
// (given twice, or the tool of two agents) is served once; two agents
// with one name are an error.
func (rt *runtime) add(a *onion.Agent) error {
	if other, ok := rt.agents[a.Name()]; ok {
		if other != a {
			return fmt.Errorf("temporal: two agents are named %q; runs find their agent by name", a.Name())
		}
		return nil
	}
	rt.agents[a.Name()] = a
	for _, sub := range drive.SubAgents(a) {
		if err := rt.add(sub); err != nil {
			return err
		}
	}
	return nil
}

func (rt *runtime) agent(name string) (*onion.Agent, error) {
	a, ok := rt.agents[name]
	if !ok {
		return nil, fmt.Errorf("this worker serves no agent named %q: give it to NewWorker on every worker of the task queue", name)
	}
	return a, nil
}

// registry is what both a worker and the SDK's test environment register
// with.
type registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

func (rt *runtime) register(r registry) {
	r.RegisterWorkflowWithOptions(rt.run, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(rt.model, activity.RegisterOptions{Name: modelActivity})
	r.RegisterActivityWithOptions(rt.tool, activity.RegisterOptions{Name: toolActivity})
	r.RegisterActivityWithOptions(rt.needsApproval, activity.RegisterOptions{Name: approvalActivity})
}

// NewWorker returns a worker (not yet started) of taskQueue that runs the
// durable runs of these agents, found by their names. Every worker of the
// task queue must be given the same agents, with the same tools and
// options: a run's workflow may move from one worker to another at any
// point. The agents' model clients are built here, on the worker, so no
// API key travels through Temporal.
//
// Its options are Temporal's defaults, but for a stop timeout of
// DefaultStopTimeout: NewWorkerWithOptions sets them.
func NewWorker(c client.Client, taskQueue string, agents ...*onion.Agent) (worker.Worker, error) {
	return NewWorkerWithOptions(c, taskQueue, worker.Options{}, agents...)
}

// DefaultStopTimeout is how long a worker's Stop waits, unless its options
// set another WorkerStopTimeout, for the model requests and tool calls it
// is running to finish and be reported. It is under the 30 s that
// Kubernetes (terminationGracePeriodSeconds) and Amazon ECS (stopTimeout)
// give a process between SIGTERM and SIGKILL by default, so that a deploy
// stops a worker before it is killed.
const DefaultStopTimeout = 25 * time.Second

// NewWorkerWithOptions is NewWorker with the worker's options: its
// Identity, concurrency limits (MaxConcurrentActivityExecutionSize, ...),
// WorkerStopTimeout and the rest of worker.Options. onion's interceptors
// are added after opts.Interceptors, which all stay.
//
// Stop (which Run calls on SIGINT or SIGTERM, given worker.InterruptCh())
// takes no new work and waits up to WorkerStopTimeout for the calls and
// model requests in flight to finish and be reported: a zero
// WorkerStopTimeout is DefaultStopTimeout, and a negative one waits for
// nothing. A call still running when the wait ends is cut, as when its
// worker is lost: a read runs again on another worker, a write ends
// outcome_unknown, a model request is sent again (see LostWorkerRetries).
// Keep the stop timeout below the time your platform gives a stopping
// process before it kills it. StickyScheduleToStartTimeout (5 s by
// default) is how long the next step of a run that a killed worker held
// waits for that worker before any other takes it.
func NewWorkerWithOptions(c client.Client, taskQueue string, opts worker.Options, agents ...*onion.Agent) (worker.Worker, error) {
	rt, err := newRuntime(agents)
	if err != nil {
		return nil, err
	}
	switch {
	case opts.WorkerStopTimeout == 0:
		opts.WorkerStopTimeout = DefaultStopTimeout
	case opts.WorkerStopTimeout < 0:
		opts.WorkerStopTimeout = 0 // Temporal's: cut at once
	}
	opts.Interceptors = append(slices.Clip(opts.Interceptors), &tracing{})
	w := worker.New(c, taskQueue, opts)
	rt.register(w)
	return w, nil
}

// NewReplayer returns a replayer of the durable runs of these agents: give
// it the recorded history of a run (ReplayWorkflowHistory) to check that
// the workflow of this version of onion and of these agents carries that
// run on as it went, without running a tool or asking a model. The
// agents' instruments see nothing of a replay.
func NewReplayer(agents ...*onion.Agent) (worker.WorkflowReplayer, error) {
	rt, err := newRuntime(agents)
	if err != nil {
		return nil, err
	}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
		Interceptors: []interceptor.WorkerInterceptor{&tracing{}}})
	if err != nil {
		return nil, fmt.Errorf("temporal: %w", err)
	}
	r.RegisterWorkflowWithOptions(rt.run, workflow.RegisterOptions{Name: WorkflowName})
	return r, nil
}
