package temporal

import (
	"fmt"
	"time"

	"github.com/onionkit/onion"
)

// This file holds what a run is started with: the StartOptions and the
// settings they fill in, which travel in the workflow's input so that
// every worker runs the workflow the same way.

// StartOption configures a durable run (see Start).
type StartOption interface {
	applyStart(*startConfig) error
}

type startOptionFunc func(*startConfig) error

func (f startOptionFunc) applyStart(c *startConfig) error { return f(c) }

type startConfig struct {
	workflowID string
	history    []onion.Message
	settings   settings
	answer     *onion.AnswerSpec // Answer's
}

// settings are the durable runtime's own knobs. They are part of the
// workflow's input: changing them never changes a run already going.
type settings struct {
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout"`
	ApprovalTimeout  time.Duration `json:"approval_timeout"`
	QueueTimeout     time.Duration `json:"queue_timeout"`
	ToolTimeout      time.Duration `json:"tool_timeout,omitempty"` // 0: from the agent's ToolTimeout
	ModelTimeout     time.Duration `json:"model_timeout"`
	ModelRetries     *int          `json:"model_retries,omitempty"` // nil: the agent's onion.Retries
	LostWorker       int           `json:"lost_worker_attempts"`
	HistoryEvents    int           `json:"history_events"`
	HistoryBytes     int           `json:"history_bytes"`
	// LocalSteps runs model requests and reads as local activities (see
	// LocalSteps). It is in the input, so that a run keeps one way on
	// replay, whichever version of onion a worker runs.
	LocalSteps bool `json:"local_steps,omitempty"`
	// ChildRuns runs a call of an agent given as a tool as a child
	// workflow; runs started before it ran such a call as one activity.
	ChildRuns bool `json:"child_runs,omitempty"`
}

// newStartConfig is what opts configure, from the default settings; a nil
// option is skipped.
func newStartConfig(opts []StartOption) (startConfig, error) {
	cfg := startConfig{settings: defaultSettings()}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.applyStart(&cfg); err != nil {
			return startConfig{}, err
		}
	}
	return cfg, nil
}

func defaultSettings() settings {
	return settings{
		HeartbeatTimeout: 30 * time.Second,
		ApprovalTimeout:  24 * time.Hour,
		QueueTimeout:     time.Hour,
		ModelTimeout:     10 * time.Minute,
		LostWorker:       5,
		HistoryEvents:    10_000,
		HistoryBytes:     8 << 20,
		ChildRuns:        true,
	}
}

// WorkflowID sets the run's workflow ID (default: a new one made from the
// agent's name). Starting a second run with the ID of one still going
// fails.
func WorkflowID(id string) StartOption {
	return startOptionFunc(func(c *startConfig) error {
		if id == "" {
			return fmt.Errorf("temporal.WorkflowID: the ID is empty")
		}
		c.workflowID = id
		return nil
	})
}

// History makes the run continue the conversation msgs, such as the one
// Conversation returns for an earlier run, or onion.Conversation.History
// (Continue takes the conversation itself).
func History(msgs []onion.Message) StartOption {
	return startOptionFunc(func(c *startConfig) error {
		for i, m := range msgs {
			if !m.Role.Valid() || m.Role == onion.RoleSystem {
				return fmt.Errorf("temporal.History: message %d has role %q; want user, assistant or tool", i, m.Role)
			}
		}
		c.history = append([]onion.Message(nil), msgs...)
		return nil
	})
}

// HeartbeatTimeout sets how long a tool or model activity may go without
// a heartbeat before its worker counts as lost (default 30 s). The
// activity heartbeats on its own while the tool runs, every quarter of
// the timeout. A shorter timeout notices a killed worker sooner (5 s
// notices it in about 6 s) for more heartbeats to the server, and counts
// a worker cut off from the server that long as lost.
func HeartbeatTimeout(d time.Duration) StartOption {
	return durationOption("HeartbeatTimeout", d, func(c *startConfig) { c.settings.HeartbeatTimeout = d })
}

// ApprovalTimeout sets how long a call waits for Approve (default 24 h).
// A call nobody answered in time is denied.
func ApprovalTimeout(d time.Duration) StartOption {
	return durationOption("ApprovalTimeout", d, func(c *startConfig) { c.settings.ApprovalTimeout = d })
}

// QueueTimeout sets how long a tool call may wait for a worker to start
// it (default 1 h: Temporal's schedule-to-start timeout). A call no worker
// started in time fails without having run, so it is safe to call again.
func QueueTimeout(d time.Duration) StartOption {
	return durationOption("QueueTimeout", d, func(c *startConfig) { c.settings.QueueTimeout = d })
}

// ToolTimeout sets how long one attempt of a tool call may take on its
// worker (Temporal's start-to-close timeout). The default is the agent's
// onion.ToolTimeout (onion.DefaultToolTimeout, 5 minutes, unless the agent
// sets another) plus the heartbeat timeout, so that the worker cuts the
// call off before Temporal gives up on it; 1 h for an agent built with
// onion.ToolTimeout(0). A write that times out ends outcome_unknown.
func ToolTimeout(d time.Duration) StartOption {
	return durationOption("ToolTimeout", d, func(c *startConfig) { c.settings.ToolTimeout = d })
}

// ModelTimeout sets how long one model request may take (default 10 min).
func ModelTimeout(d time.Duration) StartOption {
	return durationOption("ModelTimeout", d, func(c *startConfig) { c.settings.ModelTimeout = d })
}

// ModelRetries sets how many times a failed model request is sent again
// when it may succeed. The default is the agent's own onion.Retries.
func ModelRetries(n int) StartOption {
	return startOptionFunc(func(c *startConfig) error {
		if n < 0 {
			return fmt.Errorf("temporal.ModelRetries(%d): must not be negative", n)
		}
		c.settings.ModelRetries = &n
		return nil
	})
}

// LostWorkerRetries sets how many times an activity whose worker was lost
// (killed, stopped past its stop timeout, or cut off from the server
// for longer than the heartbeat timeout) is run again on another worker
// (default 5): a model request, a read, an idempotent write. A lost worker
// is not a failed attempt: it spends neither the agent's Retries nor its
// ToolRetries. A write is never run again; it ends outcome_unknown. The
// bound keeps a request that kills every worker it reaches (one that
// runs them out of memory) from killing them forever.
func LostWorkerRetries(n int) StartOption {
	return startOptionFunc(func(c *startConfig) error {
		if n < 0 {
			return fmt.Errorf("temporal.LostWorkerRetries(%d): must not be negative", n)
		}
		c.settings.LostWorker = n
		return nil
	})
}

// LocalSteps makes the run's model requests and reads local activities:
// the worker running the workflow task runs them and records their
// results with the task's completion, with no trip through the server's
// queues. A round of a model request, a read and the answer then costs
// the server one workflow task rather than four and three activity tasks,
// about a third of the CPU and a quarter of the time
// (BenchmarkDurableStep in temporal/devserver). Writes stay regular
// activities, sent at most once: a write is scheduled only once the steps
// before it are recorded. What a run gives up, and why it is not the
// default:
//   - A lost worker loses every step since its last workflow task
//     completed, and the next worker does them again: model requests that
//     had answered are sent again (billed again, and the model may answer
//     otherwise), and reads run again, each as attempt 1, since no attempt
//     was recorded. The history shows a timed-out workflow task, not the
//     requests that were lost.
//   - A lost worker is noticed when the workflow task times out (10 s),
//     not within HeartbeatTimeout, and its steps are done again without
//     the bound of LostWorkerRetries: a request that kills every worker it
//     reaches keeps killing them.
//   - A cancellation or an Approve reaches a run whose local step is in
//     flight at the workflow task's next heartbeat (every 8 s).
//   - In the Temporal UI each step is a marker, not an activity, and it
//     runs on the workflow's worker, never on workers of its own.
//
// Use it for short, cheap model requests and reads, where a step's cost
// is mostly Temporal's own.
func LocalSteps() StartOption {
	return startOptionFunc(func(c *startConfig) error {
		c.settings.LocalSteps = true
		return nil
	})
}

// HistoryBudget sets when a run continues as new: before its history
// passes events events or bytes bytes (default 10,000 events and 8 MiB,
// well under Temporal's limits of 51,200 and 50 MB). The run also
// continues as new whenever the server suggests it.
func HistoryBudget(events, bytes int) StartOption {
	return startOptionFunc(func(c *startConfig) error {
		if events < 1 || bytes < 1 {
			return fmt.Errorf("temporal.HistoryBudget(%d, %d): both must be at least 1", events, bytes)
		}
		c.settings.HistoryEvents, c.settings.HistoryBytes = events, bytes
		return nil
	})
}

func durationOption(name string, d time.Duration, set func(*startConfig)) StartOption {
	return startOptionFunc(func(c *startConfig) error {
		if d <= 0 {
			return fmt.Errorf("temporal.%s(%v): must be positive", name, d)
		}
		set(c)
		return nil
	})
}
