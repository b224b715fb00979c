package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/onionkit/onion"
)

// scope is the instrumentation scope of onion's spans and measurements.
const scope = "github.com/onionkit/onion/telemetry"

// The span kinds, made once.
var (
	internal = trace.WithSpanKind(trace.SpanKindInternal)
	client   = trace.WithSpanKind(trace.SpanKindClient)
)

// instrument is the onion.Instrument Option makes. With a tracer that
// does not record and instruments that are not enabled (no SDK installed)
// it keeps no state and builds no attributes.
type instrument struct {
	tracer   trace.Tracer
	content  bool
	provider string
	duration metric.Float64Histogram
	tokens   metric.Int64Histogram
	calls    metric.Int64Counter
}

func newInstrument(s settings) *instrument {
	in := &instrument{tracer: s.tp.Tracer(scope), content: s.content, provider: s.provider}
	m := s.mp.Meter(scope)
	// The conventions' instruments, with their bucket advice. Errors leave
	// a no-op instrument, which is what the API returns with them.
	in.duration, _ = m.Float64Histogram("gen_ai.client.operation.duration",
		metric.WithDescription("GenAI operation duration."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	in.tokens, _ = m.Int64Histogram("gen_ai.client.token.usage",
		metric.WithDescription("Number of input and output tokens used."), metric.WithUnit("{token}"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	in.calls, _ = m.Int64Counter("onion.tool.calls",
		metric.WithDescription("Tool calls, by tool and outcome."), metric.WithUnit("{call}"))
	return in
}

// The states of a run, a model request and a tool call, kept in the
// context each runs under.
type (
	runState struct {
		info     onion.RunInfo
		provider string
		server   string
		port     int
		span     trace.Span
	}
	modelState struct {
		run   *runState
		span  trace.Span
		model string
		start time.Time
	}
	toolState struct {
		span trace.Span
	}
	// key is the context key of one instrument's state of one kind.
	key struct {
		in   *instrument
		kind uint8
	}
)

func (in *instrument) run(ctx context.Context) *runState {
	st, _ := ctx.Value(key{in, 0}).(*runState)
	return st
}

// measuring reports whether any of the instruments records.
func (in *instrument) measuring(ctx context.Context) bool {
	return in.duration.Enabled(ctx) || in.tokens.Enabled(ctx) || in.calls.Enabled(ctx)
}

// newRunState is what the spans of the run info share.
func (in *instrument) newRunState(info onion.RunInfo) *runState {
	st := &runState{info: info, provider: info.Provider, server: info.Server}
	if in.provider != "" {
		st.provider = in.provider
	}
	if host, port, err := net.SplitHostPort(info.Server); err == nil {
		st.server = host
		st.port, _ = strconv.Atoi(port)
	}
	return st
}

// AttachRun keeps the run's attributes in ctx for the chat spans of a
// durable run's activities; their parent is the trace context ctx
// carries, the invoke_agent span the workflow started.
func (in *instrument) AttachRun(ctx context.Context, info onion.RunInfo) context.Context {
	st := in.newRunState(info)
	st.span = trace.SpanFromContext(ctx)
	return context.WithValue(ctx, key{in, 0}, st)
}

func (in *instrument) StartRun(ctx context.Context, info onion.RunInfo) context.Context {
	st := in.newRunState(info)
	ctx, st.span = in.tracer.Start(ctx, OperationInvokeAgent+" "+info.Agent, internal)
	if !st.span.IsRecording() && !in.measuring(ctx) {
		return ctx
	}
	if st.span.IsRecording() {
		attrs := []attribute.KeyValue{OperationName.String(OperationInvokeAgent), AgentName.String(info.Agent),
			RequestModel.String(info.Model), RunID.String(info.RunID)}
		attrs = st.common(attrs)
		if in.content {
			if info.SystemPrompt != "" {
				attrs = append(attrs, SystemInstructions.String(jsonText([]part{{Type: "text", Content: info.SystemPrompt}})))
			}
			attrs = append(attrs, InputMessages.String(jsonText([]message{{Role: "user", Parts: []part{{Type: "text", Content: info.Prompt}}}})))
			if len(info.Tools) > 0 {
				attrs = append(attrs, ToolDefinitions.String(toolDefinitions(info.Tools)))
			}
		}
		st.span.SetAttributes(attrs...)
	}
	return context.WithValue(ctx, key{in, 0}, st)
}

// providerName is the gen_ai.provider.name of an onion provider's name:
// the semantic conventions call the Gemini API "gcp.gemini".
func providerName(p string) string {
	if p == "gemini" {
		return "gcp.gemini"
	}
	return p
}

// common adds the provider and the server to attrs.
func (st *runState) common(attrs []attribute.KeyValue) []attribute.KeyValue {
	if st.provider != "" {
		attrs = append(attrs, ProviderName.String(providerName(st.provider)))
	}
	if st.server != "" {
		attrs = append(attrs, ServerAddress.String(st.server))
		if st.port != 0 {
			attrs = append(attrs, ServerPort.Int(st.port))
		}
	}
	return attrs
}

func (in *instrument) EndRun(ctx context.Context, res *onion.Result, err error) {
	st := in.run(ctx)
	if st == nil {
		return // nothing recorded
	}
	if st.span.IsRecording() && res != nil {
		attrs := []attribute.KeyValue{RunStopReason.String(string(res.StopReason)),
			InputTokens.Int(res.Usage.PromptTokens), OutputTokens.Int(res.Usage.CompletionTokens)}
		if in.content && err == nil {
			attrs = append(attrs, OutputMessages.String(jsonText([]message{{Role: "assistant",
				Parts: []part{{Type: "text", Content: res.Output}}, FinishReason: "stop"}})))
		}
		st.span.SetAttributes(attrs...)
	}
	if err != nil {
		st.span.SetAttributes(ErrorType.String(errorType(err)))
		st.span.SetStatus(codes.Error, err.Error())
	}
	st.span.End()
}

func (in *instrument) StartModel(ctx context.Context, req *onion.Request) context.Context {
	ctx, span := in.tracer.Start(ctx, OperationChat+" "+req.Model, client)
	if !span.IsRecording() && !in.duration.Enabled(ctx) && !in.tokens.Enabled(ctx) {
		return ctx
	}
	st := &modelState{run: in.run(ctx), span: span, model: req.Model, start: time.Now()}
	if st.run == nil {
		st.run = &runState{provider: in.provider}
	}
	if st.span.IsRecording() {
		attrs := []attribute.KeyValue{OperationName.String(OperationChat), RequestModel.String(req.Model)}
		attrs = st.run.common(attrs)
		if req.Temperature != nil {
			attrs = append(attrs, RequestTemperature.Float64(float64(*req.Temperature)))
		}
		if in.content {
			var system []part
			msgs := make([]message, 0, len(req.Messages))
			for _, m := range req.Messages {
				if m.Role == onion.RoleSystem {
					system = append(system, part{Type: "text", Content: m.Content})
					continue
				}
				msgs = append(msgs, messageOf(m, ""))
			}
			if len(system) > 0 {
				attrs = append(attrs, SystemInstructions.String(jsonText(system)))
			}
			attrs = append(attrs, InputMessages.String(jsonText(msgs)))
			if len(req.Tools) > 0 {
				attrs = append(attrs, ToolDefinitions.String(toolDefinitions(req.Tools)))
			}
		}
		st.span.SetAttributes(attrs...)
	}
	return context.WithValue(ctx, key{in, 1}, st)
}

func (in *instrument) RetryModel(ctx context.Context, attempt int, err error, wait time.Duration) {
	st, _ := ctx.Value(key{in, 1}).(*modelState)
	if st == nil || !st.span.IsRecording() {
		return
	}
	st.span.AddEvent("onion.model.retry", trace.WithAttributes(RetryAttempt.Int(attempt),
		RetryWait.Float64(wait.Seconds()), ErrorType.String(errorType(err)), attribute.String("exception.message", err.Error())))
}

func (in *instrument) EndModel(ctx context.Context, resp *onion.Response, err error) {
	st, _ := ctx.Value(key{in, 1}).(*modelState)
	if st == nil {
		return
	}
	in.measure(ctx, st, resp, err)
	if err != nil {
		st.span.SetAttributes(ErrorType.String(errorType(err)))
		st.span.SetStatus(codes.Error, err.Error())
		st.span.End()
		return
	}
	if st.span.IsRecording() {
		attrs := []attribute.KeyValue{InputTokens.Int(resp.Usage.PromptTokens), OutputTokens.Int(resp.Usage.CompletionTokens)}
		if resp.ID != "" {
			attrs = append(attrs, ResponseID.String(resp.ID))
		}
		if resp.Model != "" {
			attrs = append(attrs, ResponseModel.String(resp.Model))
		}
		if resp.FinishReason != "" {
			attrs = append(attrs, ResponseFinish.StringSlice([]string{resp.FinishReason}))
		}
		if resp.Usage.CachedTokens > 0 {
			attrs = append(attrs, CacheReadInputTokens.Int(resp.Usage.CachedTokens))
		}
		if resp.Usage.ReasoningTokens > 0 {
			attrs = append(attrs, ReasoningTokens.Int(resp.Usage.ReasoningTokens))
		}
		if in.content {
			attrs = append(attrs, OutputMessages.String(jsonText([]message{messageOf(resp.Message, resp.FinishReason)})))
		}
		st.span.SetAttributes(attrs...)
	}
	st.span.End()
}

// measure records the duration and the tokens of the model request st.
func (in *instrument) measure(ctx context.Context, st *modelState, resp *onion.Response, err error) {
	dur, tok := in.duration.Enabled(ctx), in.tokens.Enabled(ctx)
	if !dur && !tok {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, OperationName.String(OperationChat), RequestModel.String(st.model))
	attrs = st.run.common(attrs)
	if err != nil {
		attrs = append(attrs, ErrorType.String(errorType(err)))
	} else if resp.Model != "" {
		attrs = append(attrs, ResponseModel.String(resp.Model))
	}
	if dur {
		in.duration.Record(ctx, time.Since(st.start).Seconds(), metric.WithAttributes(attrs...))
	}
	if tok && err == nil {
		in.tokens.Record(ctx, int64(resp.Usage.PromptTokens), metric.WithAttributes(append(attrs, TokenType.String("input"))...))
		in.tokens.Record(ctx, int64(resp.Usage.CompletionTokens), metric.WithAttributes(append(attrs, TokenType.String("output"))...))
	}
}

func (in *instrument) StartTool(ctx context.Context, c onion.ToolCall) context.Context {
	ctx, span := in.tracer.Start(ctx, OperationExecuteTool+" "+c.Name, internal)
	if !span.IsRecording() && !in.calls.Enabled(ctx) {
		return ctx
	}
	st := &toolState{span: span}
	if st.span.IsRecording() {
		attrs := []attribute.KeyValue{OperationName.String(OperationExecuteTool), ToolName.String(c.Name),
			ToolCallID.String(c.ID), ToolType.String("function")}
		if c.Intent != "" {
			attrs = append(attrs, ToolIntent.String(string(c.Intent)))
		}
		if run := in.run(ctx); run != nil {
			attrs = run.common(attrs)
			for _, d := range run.info.Tools {
				if d.Name == c.Name && d.Description != "" {
					attrs = append(attrs, ToolDescription.String(d.Description))
					break
				}
			}
		}
		if in.content {
			attrs = append(attrs, ToolCallArguments.String(c.Arguments))
		}
		st.span.SetAttributes(attrs...)
	}
	return context.WithValue(ctx, key{in, 2}, st)
}

func (in *instrument) EndTool(ctx context.Context, c onion.ToolCall) {
	st, _ := ctx.Value(key{in, 2}).(*toolState)
	if st == nil {
		return
	}
	if in.calls.Enabled(ctx) {
		in.calls.Add(ctx, 1, metric.WithAttributes(ToolName.String(c.Name), ToolOutcome.String(string(c.Outcome))))
	}
	if st.span.IsRecording() {
		attrs := []attribute.KeyValue{ToolOutcome.String(string(c.Outcome)), ToolAttempts.Int(c.Attempts)}
		if in.content && c.Outcome == onion.Succeeded {
			attrs = append(attrs, ToolCallResult.String(c.Output))
		}
		switch c.Outcome {
		case onion.Failed, onion.OutcomeUnknown:
			attrs = append(attrs, ErrorType.String(string(c.Outcome)))
			st.span.SetStatus(codes.Error, c.Error)
		}
		st.span.SetAttributes(attrs...)
	}
	st.span.End()
}

// errorType is the error.type of a failed request or run: the HTTP status
// of a model error, else the error's Go type.
func errorType(err error) string {
	var me *onion.ModelError
	switch {
	case errors.As(err, &me) && me.StatusCode != 0:
		return strconv.Itoa(me.StatusCode)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		err = u // the innermost error names the kind best
	}
	return fmt.Sprintf("%T", err)
}

// The content as the conventions' JSON schemas for messages give it.
type (
	message struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason,omitempty"`
	}
	part struct {
		Type      string          `json:"type"`
		Content   string          `json:"content,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Response  string          `json:"response,omitempty"`
	}
	toolDefinition struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
)

func messageOf(m onion.Message, finish string) message {
	out := message{Role: string(m.Role), FinishReason: finish}
	if m.Reasoning != "" {
		out.Parts = append(out.Parts, part{Type: "reasoning", Content: m.Reasoning})
	}
	switch m.Role {
	case onion.RoleTool:
		out.Parts = append(out.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
		return out
	}
	if m.Content != "" {
		out.Parts = append(out.Parts, part{Type: "text", Content: m.Content})
	}
	for _, tc := range m.ToolCalls {
		p := part{Type: "tool_call", ID: tc.ID, Name: tc.Name}
		if json.Valid([]byte(tc.Arguments)) {
			p.Arguments = json.RawMessage(tc.Arguments)
		} else {
			p.Arguments, _ = json.Marshal(tc.Arguments)
		}
		out.Parts = append(out.Parts, p)
	}
	if out.Parts == nil {
		out.Parts = []part{}
	}
	return out
}

func toolDefinitions(defs []onion.ToolDef) string {
	out := make([]toolDefinition, len(defs))
	for i, d := range defs {
		out[i] = toolDefinition{Type: "function", Name: d.Name, Description: d.Description, Parameters: d.Parameters}
	}
	return jsonText(out)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

var (
	_ onion.Instrument  = (*instrument)(nil)
	_ onion.RunAttacher = (*instrument)(nil)
)
