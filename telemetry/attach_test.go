package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
)

// TestAttachRunGivesChatTheRunsAttributes is a model request of a run
// started elsewhere (a durable run's activity): its chat span is the child
// of the remote run span in ctx and has the run's provider and server,
// and no invoke_agent span is made.
func TestAttachRunGivesChatTheRunsAttributes(t *testing.T) {
	r := newRig(t)
	a, err := onion.NewAgent("bot", onion.BaseURL("http://127.0.0.1:8089/v1"), onion.APIKey(secretKey), onion.Model("m"), r.option(false))
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	in := drive.Instrument(a)
	ctx = in.(onion.RunAttacher).AttachRun(ctx, drive.RunInfo(a, "r1", ""))
	ctx = in.StartModel(ctx, &onion.Request{Model: "m"})
	in.EndModel(ctx, &onion.Response{Model: "m-1"}, nil)

	spans := r.onionSpans()
	if len(spans) != 1 {
		t.Fatalf("spans %v, want only chat m", spans)
	}
	chat, ok := spans["chat m"]
	if !ok {
		t.Fatalf("no chat span: %v", spans)
	}
	if chat.Parent().SpanID() != remote.SpanID() || chat.SpanContext().TraceID() != remote.TraceID() {
		t.Errorf("chat's parent %v in trace %v, want the remote run span", chat.Parent().SpanID(), chat.SpanContext().TraceID())
	}
	at := attrs(chat)
	if at["gen_ai.provider.name"].AsString() != "openai" || at["server.address"].AsString() != "127.0.0.1" || at["server.port"].AsInt64() != 8089 {
		t.Errorf("chat's attributes %v: the run's provider and server are missing", at)
	}
}
