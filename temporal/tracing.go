package temporal

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
)

// This file is how a durable run is traced by the agent's instruments
// (onion.WithInstrument; package telemetry is the one onion ships),
// without a span twice when the workflow replays and across workers.
//
// The trace context travels as W3C Trace Context: Start records the
// caller's in the run's input, and the workflow hands the context of the
// run or of the call to each activity in the activity's Temporal header,
// which the worker's interceptor reads back. Nothing goes through a
// worker's memory, so any worker may run any part of the run.
//
// The workflow starts the run (invoke_agent) and the tool calls
// (execute_tool) with the instruments, as Run does, but only while it is
// not replaying: a worker that replays the history of a run another one
// began starts a new run span where the replay ends, and a replay of a
// finished run starts none. The model requests (chat) are traced in the
// model activity, where they are made, one span per attempt; the tool
// runs in its activity under the call's span.

// traceHeader is the activity header that holds the trace context.
const traceHeader = "onion-trace"

// traceKey is the workflow.Context key of the trace context the next
// activity gets.
type traceKey struct{}

// carrierOf is the trace context of ctx as W3C Trace Context fields, nil
// when ctx has none.
func carrierOf(ctx context.Context) map[string]string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}

// withCarrier is ctx with the trace context in c, if any.
func withCarrier(ctx context.Context, c map[string]string) context.Context {
	if len(c) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(c))
}

// tracing is the worker interceptor that moves the trace context from the
// workflow to its activities through their headers.
type tracing struct {
	interceptor.WorkerInterceptorBase
}

func (*tracing) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &activityTracing{}
	i.Next = next
	return i
}

func (*tracing) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &workflowTracing{}
	i.Next = next
	return i
}

type workflowTracing struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (w *workflowTracing) Init(out interceptor.WorkflowOutboundInterceptor) error {
	o := &activityHeaders{}
	o.Next = out
	return w.Next.Init(o)
}

// activityHeaders writes the trace context the workflow set for an
// activity into its header. A replayed activity's header is never sent, so
// what it holds there does not matter.
type activityHeaders struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *activityHeaders) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	writeTrace(ctx)
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (o *activityHeaders) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	writeTrace(ctx)
	return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

// writeTrace puts the trace context set in ctx in the header of the
// activity being started.
func writeTrace(ctx workflow.Context) {
	c, _ := ctx.Value(traceKey{}).(map[string]string)
	h := interceptor.WorkflowHeader(ctx)
	if len(c) == 0 || h == nil {
		return
	}
	if p, err := converter.GetDefaultDataConverter().ToPayload(c); err == nil {
		h[traceHeader] = p
	}
}

// activityTracing runs an activity under the trace context of its header.
type activityTracing struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *activityTracing) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if p := interceptor.Header(ctx)[traceHeader]; p != nil {
		var c map[string]string
		if err := converter.GetDefaultDataConverter().FromPayload(p, &c); err == nil {
			ctx = withCarrier(ctx, c)
		}
	}
	return a.Next.ExecuteActivity(ctx, in)
}

// spans is what the workflow keeps of its spans, on this worker.
type spans struct {
	in    onion.Instrument           // the agent's instruments, nil without
	run   context.Context            // the run's, once StartRun is called here
	tools map[string]context.Context // the calls started here, by ID
}

// startRun starts the run's span unless it has one or the workflow
// replays; a worker that takes the run over starts it where its replay
// ends.
func (r *wrun) startRun(ctx workflow.Context) {
	if r.spans.in == nil || r.spans.run != nil || workflow.IsReplaying(ctx) {
		return
	}
	base := withCarrier(context.Background(), r.in.Trace)
	r.spans.run = r.spans.in.StartRun(base, drive.RunInfo(r.agent, r.st.RunID, r.in.Prompt))
}

// endRun ends the run's span, if this worker started it; res is nil when
// the run goes on as a new workflow run.
func (r *wrun) endRun(res *onion.Result, err error) {
	if r.spans.run == nil {
		return
	}
	r.spans.in.EndRun(r.spans.run, res, err)
	r.spans.run = nil
}

// toolSpan starts a call's span when it starts and ends it when it has
// its outcome; the workflow is not replaying. A call that started before
// a replay gets both at its end, as a call that never started does in
// Run.
func (r *wrun) toolSpan(e loop.Effect, tc onion.ToolCall) {
	if r.spans.run == nil {
		return
	}
	if r.spans.tools == nil {
		r.spans.tools = map[string]context.Context{}
	}
	tctx, ok := r.spans.tools[tc.ID]
	if !ok {
		tctx = r.spans.in.StartTool(r.spans.run, tc)
		r.spans.tools[tc.ID] = tctx
	}
	if e.Event == loop.EventToolFinished {
		delete(r.spans.tools, tc.ID)
		r.spans.in.EndTool(tctx, tc)
	}
}

// traced is ctx with the trace context of the call callID (of the run
// when callID is "") for the next activity: the span this worker started,
// else the caller's.
func (r *wrun) traced(ctx workflow.Context, callID string) workflow.Context {
	c := r.carrier(callID)
	if len(c) == 0 {
		return ctx
	}
	return workflow.WithValue(ctx, traceKey{}, c)
}

// carrier is the trace context of the call callID's span, else of the
// run's, else the one the run was started with.
func (r *wrun) carrier(callID string) map[string]string {
	if tctx, ok := r.spans.tools[callID]; ok {
		return carrierOf(tctx)
	} else if r.spans.run != nil {
		return carrierOf(r.spans.run)
	}
	return r.in.Trace
}

// traceModel is ctx, the model activity's, with the chat span of req
// started by in, the run's instruments (see runtime.instrument), under the run's span the header
// carried; end ends it.
func traceModel(ctx context.Context, in onion.Instrument, a *onion.Agent, runID string, req *loop.Request) (_ context.Context, end func(*loop.Response, error)) {
	if in == nil {
		return ctx, func(*loop.Response, error) {}
	}
	if at, ok := in.(onion.RunAttacher); ok {
		ctx = at.AttachRun(ctx, drive.RunInfo(a, runID, ""))
	}
	ctx = in.StartModel(ctx, req)
	return ctx, func(resp *loop.Response, err error) { in.EndModel(ctx, resp, err) }
}
