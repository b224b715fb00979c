package onion

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// replaySeam is a seam with no real time, randomness or concurrency, as a
// durable workflow engine would give the core: it records every request
// and call so that two runs can be compared.
type replaySeam struct {
	requests []*Request
	calls    []string
	events   []Event
	clock    time.Time
	ids      int
}

func (r *replaySeam) seam(replies []Message) *seam {
	return &seam{
		model: func(_ context.Context, req *Request) (*Response, error) {
			r.requests = append(r.requests, req)
			msg := replies[len(r.requests)-1]
			return &Response{Message: msg, Usage: Usage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}}, nil
		},
		runTool: func(ctx context.Context, t *Tool, c Call, args string) (string, error) {
			r.calls = append(r.calls, fmt.Sprintf("%s(%s) attempt %d key %s", c.Name, args, c.Attempt, c.IdempotencyKey))
			if c.Name == "fail" {
				return "", fmt.Errorf("refused")
			}
			return t.Call(ctx, args)
		},
		approve: func(context.Context, Call) (bool, error) { return true, nil },
		now:     func() time.Time { r.clock = r.clock.Add(time.Millisecond); return r.clock },
		emit:    func(e Event) { r.events = append(r.events, e) },
		newID:   func() string { r.ids++; return fmt.Sprintf("id%d", r.ids) },
		spawn:   func(fn func()) { fn() }, // one at a time, in order
		sleep:   func(context.Context, time.Duration) error { return nil },
		backoff: func(n int) time.Duration { return time.Duration(n) * time.Second },
	}
}

func toolCalls(calls ...string) Message {
	msg := Message{Role: RoleAssistant}
	for i := 0; i < len(calls); i += 2 {
		msg.ToolCalls = append(msg.ToolCalls, ToolRequest{ID: fmt.Sprint("c", i), Name: calls[i], Arguments: calls[i+1]})
	}
	return msg
}

// TestCoreReplaysIdentically runs the loop's core twice over a seam without
// time, randomness or concurrency: the requests, the calls, the events and
// the result must come out the same, as a durable engine's replay needs.
func TestCoreReplaysIdentically(t *testing.T) {
	echo, err := NewTool(func(a struct {
		S string `json:"s"`
	}) string {
		return a.S
	}, Name("echo"), Read)
	if err != nil {
		t.Fatal(err)
	}
	fail, err := NewTool(func(struct{}) error { return nil }, Name("fail"))
	if err != nil {
		t.Fatal(err)
	}
	write, err := NewTool(func(struct{}) error { return nil }, Name("write"), RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAgent("replay", echo, fail, write, MaxIterations(2), APIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	replies := []Message{
		toolCalls("echo", `{"s":"a"}`, "echo", `{"s":"b"}`, "write", `{}`, "fail", `{}`, "write", `{}`),
		toolCalls("nope", `{}`, "echo", `{"s":1}`),
		{Role: RoleAssistant, Content: "final"},
	}
	run := func() (string, *replaySeam) {
		r := &replaySeam{clock: time.Unix(0, 0)}
		res, msgs, err := a.loop(context.Background(), r.seam(replies), nil, "go")
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(struct {
			Res  *Result
			Msgs []Message
		}{res, msgs})
		if err != nil {
			t.Fatal(err)
		}
		return string(b), r
	}
	first, r1 := run()
	second, r2 := run()
	if first != second {
		t.Errorf("the result differs between runs:\n%s\n%s", first, second)
	}
	if !reflect.DeepEqual(r1.requests, r2.requests) || !reflect.DeepEqual(r1.calls, r2.calls) || !reflect.DeepEqual(r1.events, r2.events) {
		t.Error("requests, calls or events differ between runs")
	}
	// And the core did what it should on the way: the second write was
	// skipped after the failure, the cap's request had no tools.
	want := []string{
		`echo({"s":"a"}) attempt 1 key id1:c0`,
		`echo({"s":"b"}) attempt 1 key id1:c2`,
		`write({}) attempt 1 key id1:c4`,
		`fail({}) attempt 1 key id1:c6`,
		`echo({"s":1}) attempt 1 key id1:c2`,
	}
	if !reflect.DeepEqual(r1.calls, want) {
		t.Errorf("calls = %q\nwant %q", r1.calls, want)
	}
	if n := len(r1.requests); n != 3 || len(r1.requests[2].Tools) != 0 {
		t.Errorf("%d requests; the last has %d tools", n, len(r1.requests[n-1].Tools))
	}
}
