package onion_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// agentOn makes an agent called name whose model is s.
func agentOn(t *testing.T, name string, s *oniontest.Server, items ...any) *onion.Agent {
	t.Helper()
	items = append([]any{onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.Model("test-model"),
		onion.RetryBackoff(time.Millisecond, 5*time.Millisecond)}, items...)
	a, err := onion.NewAgent(name, items...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// Fetch returns the text of a web page.
//
// url: the page
//
//onion:intent read
func Fetch(url string) (string, error) { return "the page at " + url + " says 42", nil }

// TestSubAgentAnswers: the lead hands a task to the reader, which calls a
// tool and answers; the lead answers from that, and usage adds up, with a
// breakdown by agent.
func TestSubAgentAnswers(t *testing.T) {
	readerModel := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("fetch", `{"url":"https://example.com"}`)).WithUsage(100, 10),
		oniontest.Text("The page says 42.").WithUsage(120, 5),
	)
	leadModel := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("reader", `{"task":"What does https://example.com say?"}`)).WithUsage(50, 8),
		oniontest.Text("It says 42.").WithUsage(70, 4),
	)
	reader := agentOn(t, "reader", readerModel, Fetch, onion.Description("Reads web pages and says what they say."))
	lead := agentOn(t, "lead", leadModel, reader)

	defs := lead.DescribeTools()
	if tool, _ := lead.Tools().Get("reader"); len(defs) != 1 || defs[0].Name != "reader" || tool.Intent() != onion.Read || defs[0].Description != "Reads web pages and says what they say." {
		t.Fatalf("the lead's tools: %+v", defs)
	}
	res, err := lead.Run(context.Background(), "Read example.com for me")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "It says 42." || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded || res.ToolCalls[0].Output != "The page says 42." {
		t.Fatalf("result %+v", res)
	}
	if got := readerModel.Requests()[0].Body.Messages; got[len(got)-1].Content != "What does https://example.com say?" || len(got) != 2 {
		t.Errorf("the reader's first request: %+v; want the system prompt and the task alone", got)
	}
	if got := toolMessages(t, leadModel, 1); got[res.ToolCalls[0].ID] != "The page says 42." {
		t.Errorf("the lead read %q", got)
	}
	want := onion.Usage{PromptTokens: 340, CompletionTokens: 27, TotalTokens: 367, Requests: 4}
	if res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	if got := res.ByAgent; got["lead"].Requests != 2 || got["lead/reader"].Requests != 2 || got["lead/reader"].PromptTokens != 220 || len(got) != 2 {
		t.Errorf("by agent %+v", got)
	}
}

// BookSeat books a seat.
//
// seat: which seat
//
//onion:intent write
//onion:approve
func BookSeat(seat string) (string, error) { return "booked " + seat, nil }

// Pay pays for what was booked.
//
//onion:intent write
func Pay() (string, error) { return "paid", nil }

// TestSubAgentApproval: a call inside the sub-agent that needs approval is
// asked once, of the lead's approver, with the path of agents; a denied
// write skips the sub-agent's later writes but not the lead's reads.
func TestSubAgentApproval(t *testing.T) {
	bookerModel := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("book_seat", `{"seat":"12A"}`), oniontest.Call("pay", `{}`)),
		oniontest.Text("Could not book."),
	)
	leadModel := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("booker", `{"task":"Book seat 12A and pay"}`), oniontest.Call("fetch", `{"url":"https://example.com"}`)),
		oniontest.Text("Not booked."),
	)
	booker := agentOn(t, "booker", bookerModel, BookSeat, Pay)
	var mu sync.Mutex
	var asked []onion.Call
	lead := agentOn(t, "lead", leadModel, booker, Fetch, onion.Approver(func(ctx context.Context, c onion.Call) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, c)
		return false, nil
	}))
	if tool, _ := lead.Tools().Get("booker"); tool == nil || tool.Intent() != onion.Write {
		t.Fatalf("booker as a tool: %+v; want a write", tool)
	}
	var events []onion.ToolCall
	var res *onion.Result
	for e, err := range lead.Stream(context.Background(), "Book 12A") {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == onion.EventToolFinished {
			events = append(events, *e.Call)
		}
		if e.Kind == onion.EventDone {
			res = e.Result
		}
	}
	if len(asked) != 1 || asked[0].Name != "book_seat" || !slices.Equal(asked[0].Agents, []string{"lead", "booker"}) {
		t.Fatalf("asked %+v; want book once, with the path lead, booker", asked)
	}
	outcomes := map[string]onion.Outcome{}
	for _, c := range events {
		outcomes[strings.Join(append(slices.Clone(c.Agents), c.Name), "/")] = c.Outcome
	}
	want := map[string]onion.Outcome{"lead/booker/book_seat": onion.Denied, "lead/booker/pay": onion.Skipped, "booker": onion.Succeeded, "fetch": onion.Succeeded}
	for k, v := range want {
		if outcomes[k] != v {
			t.Errorf("%s: %s, want %s (all: %v)", k, outcomes[k], v, outcomes)
		}
	}
	if res == nil || res.Output != "Not booked." {
		t.Errorf("result %+v", res)
	}
}

// TestSubAgentCanceled: cancelling the lead mid-sub-run ends both; the
// sub-agent's write in flight, and the lead's call of the sub-agent (a
// write), end outcome_unknown.
func TestSubAgentCanceled(t *testing.T) {
	started := make(chan struct{})
	hang, err := onion.NewTool(func(ctx context.Context) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}, onion.Name("transfer"), onion.Description("Moves money."), onion.Write, onion.NoApproval())
	if err != nil {
		t.Fatal(err)
	}
	workerModel := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("transfer", `{}`)))
	leadModel := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("worker", `{"task":"move it"}`)))
	worker := agentOn(t, "worker", workerModel, hang)
	lead := agentOn(t, "lead", leadModel, worker)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	var inner onion.ToolCall
	var res *onion.Result
	for e, err := range lead.Stream(ctx, "go") {
		if e.Kind == onion.EventToolFinished && e.Call.Name == "transfer" {
			inner = *e.Call
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if e.Result != nil {
			res = e.Result
		}
	}
	if inner.Outcome != onion.OutcomeUnknown || !slices.Equal(inner.Agents, []string{"lead", "worker"}) {
		t.Errorf("the write inside: %+v", inner)
	}
	if res == nil || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.OutcomeUnknown {
		t.Errorf("the lead's call of the worker: %+v", res.ToolCalls)
	}
}

// TestSubAgentsRefused: agents whose names make a cycle, and a nesting
// deeper than MaxAgentDepth, are refused at NewAgent, naming the path.
func TestSubAgentsRefused(t *testing.T) {
	s := oniontest.NewServer(t)
	a := agentOn(t, "A", s, Fetch)
	b := agentOn(t, "B", s, a)
	if _, err := onion.NewAgent("A", b); err == nil || !strings.Contains(err.Error(), "A → B → A") {
		t.Errorf("A → B → A: %v", err)
	}
	deep := agentOn(t, "d1", s, Fetch)
	for i := 2; i <= onion.MaxAgentDepth; i++ {
		deep = agentOn(t, "d"+string(rune('0'+i)), s, deep)
	}
	_, err := onion.NewAgent("top", deep)
	if err == nil || !strings.Contains(err.Error(), "top → d4 → d3 → d2 → d1") {
		t.Errorf("too deep: %v", err)
	}
	if _, err := onion.NewAgent("lead", (*onion.Agent)(nil)); err == nil {
		t.Error("a nil agent was taken")
	}
	odd := agentOn(t, "has space", s, Fetch)
	if _, err := onion.NewAgent("lead", odd); err == nil || !strings.Contains(err.Error(), `agent "has space" cannot be a tool`) {
		t.Errorf("a name no tool can have: %v", err)
	}
}

// TestTerminalApproverNamesTheAgents: a question about a call inside an
// agent given as a tool says whose call it is.
func TestTerminalApproverNamesTheAgents(t *testing.T) {
	var out strings.Builder
	approve := onion.TerminalApprover(strings.NewReader("y\n"), &out)
	ok, err := approve(context.Background(), onion.Call{Name: "book_seat", Intent: onion.Write, Arguments: []byte(`{"seat":"12A"}`), Agents: []string{"lead", "booker"}})
	if !ok || err != nil || !strings.HasPrefix(out.String(), "The agent lead → booker wants to run book_seat (write)") {
		t.Errorf("ok %v, err %v, asked %q", ok, err, out.String())
	}
}
