// Package temporal runs onion agents durably on Temporal: a run survives a
// worker crash or a deploy, a write is sent at most once, and an approval
// can wait for days.
//
// The workflow drives the agent's own loop (package loop), the same rules
// Agent.Run follows; what changes is who carries out its effects:
//
//   - Each model request and each tool call is an activity. LocalSteps
//     makes model requests and reads local activities, run by the worker
//     of the workflow task: a round of a model request, a read and the
//     answer is then one workflow task for the server, not four workflow
//     tasks and three activity tasks, and a lost worker's steps since its
//     last workflow task are done again (LocalSteps says what else).
//   - A model request is retried as the agent retries (its Retries,
//     RetryBackoff and MaxRetryAfter; ModelRetries may override the count)
//     what onion.Retryable says may pass: a 429 or 5xx that says
//     Retry-After waits that long (NextRetryDelay); any other 4xx is not
//     retried. A lost worker (killed, or stopped past its stop timeout) is
//     not a failed request: the request is sent again by another worker,
//     up to LostWorkerRetries times (5), apart from Retries. The
//     model client is the worker's agent's, so no API key ever enters the
//     workflow history.
//   - The agent's hooks are called once each, never on replay: BeforeModel
//     and AfterModel in the model activity (a retry is the same request;
//     their error stops the run), BeforeTool and AfterTool by the workflow
//     when a call starts and when it has its outcome, and OnComplete or
//     OnError when the run ends. The workflow's hooks run inside a
//     workflow task, so they must be quick, and their error is logged
//     without stopping the run (only what the history records may change a
//     run's course). The activities log with the agent's Logger.
//   - A tool call's activity heartbeats on a timer while the tool runs,
//     so a lost worker is noticed within the heartbeat timeout (30 s
//     unless HeartbeatTimeout says otherwise). The tool's own failure
//     comes back as a result, never as an activity error.
//   - A read may be repeated: it is tried up to ToolRetries+1 times, and a
//     read cut by a lost worker runs again on another (LostWorkerRetries
//     times at most, apart from ToolRetries; the Result's Attempts counts
//     every attempt the tool saw). A write or delete runs at most once
//     (idempotent tools excepted): when its worker is lost mid-call the
//     call ends outcome_unknown and the later writes of that response are
//     skipped; when no worker picked it up in time it failed without
//     running, and is safe to call again.
//   - Inside a tool, the IdempotencyKey of the Call that
//     onion.CallInfo(ctx) returns is the workflow ID, the first run ID of
//     its chain of runs, the round and a hash of the model's call ID: the
//     same on every attempt, after a crash and across continue-as-new,
//     and different for every other call of any run, an execution that
//     reuses a closed workflow ID included.
//   - A call of an agent given as a tool (see "Agents as tools" in
//     package onion) is a child workflow, whose ID is the call's
//     idempotency key: a durable run of that agent, with its own
//     activities, keys and at-most-once writes. A worker serves the
//     agents given as tools of the agents it is given, by their names.
//     The sub-run's usage is in the Result's ByAgent; cancelling the run
//     cancels it and waits for it to end.
//   - A call that needs approval waits for Approve (or ApproveSignal) as
//     long as ApprovalTimeout (24 h by default); no answer means denied.
//     Pending lists the calls waiting, those inside sub-runs too, and
//     Approve reaches them given the outermost run's ID. The agent's own Approver is not
//     asked: a worker has no one to ask.
//   - Before the history passes its budget (HistoryBudget) or when the
//     server suggests it, the run continues as new between two model
//     requests, carrying the loop's state. Tool output is capped by
//     MaxToolOutput before it enters the history, and a payload that would
//     still pass Temporal's 2 MB limit ends that call (or the run) with a
//     failure that says so, instead of failing workflow tasks forever.
//   - The agent's instruments (onion.WithInstrument, package telemetry)
//     trace the run as Run does, never twice on replay: the workflow
//     starts the run's span and the calls' spans while it is not
//     replaying, and each model request is traced in its activity. The
//     span of Start's ctx is the parent of the run's; the trace context
//     goes in the run's input and in each activity's Temporal header, so
//     the spans of every worker are in the caller's trace.
//
// A worker registers the agents it serves with NewWorker (or
// NewWorkerWithOptions, with Temporal's worker options); every worker of
// a task queue must be given the same agents, tools and options. Its Stop
// lets the calls in flight finish within the stop timeout
// (DefaultStopTimeout, 25 s) before they are cut. A client starts runs
// with Start or Run, by the agent's name:
//
//	w, err := temporal.NewWorker(c, "agents", agent)
//	...
//	res, err := temporal.Run(ctx, c, "agents", "support", "Refund order 42")
//
// Conversation returns a run's conversation, which History continues in
// a new run. RunIn runs a prompt in an onion.Conversation, the value a
// live conversation uses too: the run continues its history and, ending
// with an answer, adds its turn to it.
//
// Ask returns the final answer as a Go value, as onion.Ask does (Answer
// and ResultAs split it between Start and Result): the client derives the
// type's onion.AnswerSpec and sends it with the run, the workflow checks
// each answer against its schema in a local activity, needing no Go type,
// and the client decodes the answer. AskIn asks in an onion.Conversation.
//
// On one machine the server can be the embedded one of module
// github.com/onionkit/onion/temporal/devserver; against a cluster or
// Temporal Cloud only the client's HostPort (and TLS) change.
package temporal
