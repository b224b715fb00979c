package onion_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// turns is the conversation of a request (after the system message) as
// "role: content" lines.
func turns(r oniontest.Request) []string {
	var out []string
	for _, m := range r.Body.Messages {
		if m.Role != "system" {
			out = append(out, m.Role+": "+m.Content)
		}
	}
	return out
}

// historyLines is h as "role: content" lines.
func historyLines(h []onion.Message) []string {
	var out []string
	for _, m := range h {
		out = append(out, string(m.Role)+": "+m.Content)
	}
	return out
}

// held answers like echo, except that the prompt "slow" says it has come
// on arrived and waits for release.
func held(arrived chan<- struct{}, release <-chan struct{}) func(oniontest.Request) oniontest.Step {
	return func(r oniontest.Request) oniontest.Step {
		if msgs := r.Body.Messages; msgs[len(msgs)-1].Content == "slow" {
			arrived <- struct{}{}
			<-release
		}
		return echo(r)
	}
}

// TestConversationOverlappingRuns: a run that starts while another run of
// the same conversation goes (the first building after the history in the
// last run's arrays, the second on a copy) starts from the same history,
// and each run's turn is kept in the order the runs end, whichever ends
// first; the next run's request carries both.
func TestConversationOverlappingRuns(t *testing.T) {
	for _, slowFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("slow started first ", slowFirst), func(t *testing.T) {
			s := oniontest.NewServer(t)
			arrived, release := make(chan struct{}), make(chan struct{})
			for range 5 {
				s.Add(oniontest.Func(held(arrived, release)))
			}
			conv := newAgent(t, s).NewConversation()
			ctx := context.Background()
			if _, err := conv.Run(ctx, "one"); err != nil {
				t.Fatal(err)
			}
			slow := make(chan error)
			startSlow := func() {
				go func() {
					_, err := conv.Run(ctx, "slow")
					slow <- err
				}()
				<-arrived
			}
			if slowFirst {
				startSlow()
			}
			if _, err := conv.Run(ctx, "fast"); err != nil {
				t.Fatal(err)
			}
			if !slowFirst {
				startSlow()
			}
			close(release)
			if err := <-slow; err != nil {
				t.Fatal(err)
			}
			if _, err := conv.Run(ctx, "after"); err != nil {
				t.Fatal(err)
			}
			want := []string{"user: one", "assistant: re one", "user: fast", "assistant: re fast", "user: slow", "assistant: re slow"}
			reqs := s.Requests()
			byLast := map[string][]string{}
			for _, r := range reqs {
				got := turns(r)
				byLast[strings.TrimPrefix(got[len(got)-1], "user: ")] = got
			}
			if got := byLast["after"]; !slices.Equal(got, append(want, "user: after")) {
				t.Errorf("the request after both carries\n%q\nwant\n%q", got, append(want, "user: after"))
			}
			slowFrom := []string{"user: one", "assistant: re one", "user: slow"}
			if !slowFirst {
				slowFrom = []string{"user: one", "assistant: re one", "user: fast", "assistant: re fast", "user: slow"}
			}
			if got := byLast["slow"]; !slices.Equal(got, slowFrom) {
				t.Errorf("the slow run's request carries %q, want %q", got, slowFrom)
			}
			if got, want := byLast["fast"], []string{"user: one", "assistant: re one", "user: fast"}; !slices.Equal(got, want) {
				t.Errorf("the fast run's request carries %q, want %q", got, want)
			}
			if got := historyLines(conv.History()); !slices.Equal(got, append(want, "user: after", "assistant: re after")) {
				t.Errorf("the conversation is %q", got)
			}
		})
	}
}

// TestConversationReplacedDuringARun: SetHistory or Reset while a run
// goes leaves the conversation as set, followed by the run's turn; the
// next run starts from that.
func TestConversationReplacedDuringARun(t *testing.T) {
	for _, set := range []struct {
		name string
		to   []onion.Message
	}{
		{"SetHistory", []onion.Message{{Role: onion.RoleUser, Content: "elsewhere"}, {Role: onion.RoleAssistant, Content: "re elsewhere"}}},
		{"Reset", nil},
	} {
		t.Run(set.name, func(t *testing.T) {
			s := oniontest.NewServer(t)
			arrived, release := make(chan struct{}), make(chan struct{})
			for range 4 {
				s.Add(oniontest.Func(held(arrived, release)))
			}
			conv := newAgent(t, s).NewConversation()
			ctx := context.Background()
			for _, p := range []string{"one", "two"} {
				if _, err := conv.Run(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			slow := make(chan error)
			go func() {
				_, err := conv.Run(ctx, "slow")
				slow <- err
			}()
			<-arrived
			conv.SetHistory(set.to)
			close(release)
			if err := <-slow; err != nil {
				t.Fatal(err)
			}
			want := append(historyLines(set.to), "user: slow", "assistant: re slow")
			if got := historyLines(conv.History()); !slices.Equal(got, want) {
				t.Fatalf("the conversation is %q, want %q", got, want)
			}
			if _, err := conv.Run(ctx, "next"); err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			if got := turns(reqs[len(reqs)-1]); !slices.Equal(got, append(want, "user: next")) {
				t.Errorf("the next request carries %q, want %q", got, append(want, "user: next"))
			}
		})
	}
}

// TestConversationRunsAtOnce: runs of one conversation from six
// goroutines at once, with History, MarshalHistory and Add beside them:
// every request carries whole turns, each prompt followed by its own
// answer, and the conversation ends with every turn once.
func TestConversationRunsAtOnce(t *testing.T) {
	const workers, runs = 6, 4
	s := oniontest.NewServer(t)
	for range workers * runs {
		s.Add(oniontest.Func(echo))
	}
	conv := newAgent(t, s).NewConversation()
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range runs {
				if _, err := conv.Run(ctx, fmt.Sprintf("w%d-r%d", w, r)); err != nil {
					t.Error(err)
				}
				if _, err := conv.MarshalHistory(); err != nil {
					t.Error(err)
				}
				if w == 0 && r == 1 {
					if err := conv.Add([]onion.Message{{Role: onion.RoleUser, Content: "added"}, {Role: onion.RoleAssistant, Content: "re added"}}); err != nil {
						t.Error(err)
					}
				}
				_ = conv.History()
			}
		})
	}
	wg.Wait()
	whole := func(lines []string) error {
		if len(lines)%2 != 0 {
			return fmt.Errorf("%d messages", len(lines))
		}
		for i := 0; i < len(lines); i += 2 {
			p, ok := strings.CutPrefix(lines[i], "user: ")
			if !ok || lines[i+1] != "assistant: re "+p {
				return fmt.Errorf("message %d: %q then %q", i, lines[i], lines[i+1])
			}
		}
		return nil
	}
	for i, r := range s.Requests() {
		got := turns(r)
		if err := whole(got[:len(got)-1]); err != nil {
			t.Errorf("request %d: %v:\n%q", i, err, got)
		}
	}
	h := historyLines(conv.History())
	if err := whole(h); err != nil || len(h) != 2*(workers*runs+1) {
		t.Errorf("the conversation (%d messages): %v:\n%q", len(h), err, h)
	}
	seen := map[string]bool{}
	for _, l := range h {
		if seen[l] {
			t.Errorf("%q is in the conversation twice", l)
		}
		seen[l] = true
	}
}

// TestConversationRunCopiesNoHistory: a request after 5,000 rounds of
// conversation allocates about what one after 100 does: the runs share
// the history instead of copying it (#28).
func TestConversationRunCopiesNoHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a long conversation")
	}
	model := onion.ModelFunc(func(_ context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: "noted"}}, nil
	})
	a, err := onion.NewAgent("notes", onion.WithModel(model))
	if err != nil {
		t.Fatal(err)
	}
	perRun := func(rounds int) uint64 {
		conv := a.NewConversation()
		var h []onion.Message
		for i := range rounds {
			h = append(h, onion.Message{Role: onion.RoleUser, Content: fmt.Sprint("note ", i)}, onion.Message{Role: onion.RoleAssistant, Content: "noted"})
		}
		conv.SetHistory(h)
		ctx := context.Background()
		if _, err := conv.Input(ctx, "first"); err != nil { // the first run after SetHistory copies it once
			t.Fatal(err)
		}
		const n = 100
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			if _, err := conv.Input(ctx, "again"); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / n
	}
	short, long := perRun(100), perRun(5000)
	// A copy of 10,000 messages is 1.8 MB; the history's array grows by a
	// quarter when it is full, once in about 1,250 runs here.
	if long > short+64<<10 {
		t.Errorf("a run after 5,000 rounds allocates %d bytes, after 100 rounds %d: the history is copied", long, short)
	}
	t.Logf("bytes a run: %d after 100 rounds, %d after 5,000", short, long)
}

// TestConversationAddAfterARun: a run carried out elsewhere, added after
// a run of the conversation, is in the next run's request, between them.
func TestConversationAddAfterARun(t *testing.T) {
	s := oniontest.NewServer(t)
	for range 2 {
		s.Add(oniontest.Func(echo))
	}
	conv := newAgent(t, s).NewConversation()
	ctx := context.Background()
	if _, err := conv.Run(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if err := conv.Add([]onion.Message{{Role: onion.RoleUser, Content: "durable"}, {Role: onion.RoleAssistant, Content: "re durable"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := conv.Run(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	want := []string{"user: one", "assistant: re one", "user: durable", "assistant: re durable", "user: two"}
	if got := turns(s.Requests()[1]); !slices.Equal(got, want) {
		t.Errorf("the request after Add carries %q, want %q", got, want)
	}
	if got := historyLines(conv.History()); !slices.Equal(got, append(want, "assistant: re two")) {
		t.Errorf("the conversation is %q", got)
	}
}

// bigResults answers "big" with a call of the tool big, and the result
// with "re big"; a request for a slow prompt waits as held does, and any
// other gets an echo.
func bigResults(arrived chan<- struct{}, release <-chan struct{}) func(oniontest.Request) oniontest.Step {
	return func(r oniontest.Request) oniontest.Step {
		switch last := r.Body.Messages[len(r.Body.Messages)-1]; {
		case last.Role == "user" && last.Content == "big":
			return oniontest.ToolCalls(oniontest.Call("big", `{}`))
		case last.Role == "tool":
			return oniontest.Text("re big")
		}
		return held(arrived, release)(r)
	}
}

// bigAgent is an agent that keeps tool history and compacts tool results
// past 1,000 tokens, with the tool big, whose result is 8 KB.
func bigAgent(t *testing.T, s *oniontest.Server, items ...any) *onion.Agent {
	t.Helper()
	big, err := onion.NewRawTool("big", nil, func(context.Context, json.RawMessage) (any, error) {
		return strings.Repeat("lorem ipsum ", 700), nil
	}, onion.Description("Returns a long text."), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	return newAgent(t, s, append([]any{big, onion.KeepToolHistory(), onion.CompactAfter(1000), onion.CompactWith(onion.CompactToolResults)}, items...)...)
}

// TestConversationCompactedWhileAnotherRunEnds: a run that compacted the
// history, ending after another run of the conversation ended, leaves the
// history compacted, followed by the other run's turn and its own.
func TestConversationCompactedWhileAnotherRunEnds(t *testing.T) {
	s := oniontest.NewServer(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	for range 5 {
		s.Add(oniontest.Func(bigResults(arrived, release)))
	}
	conv := bigAgent(t, s).NewConversation()
	ctx := context.Background()
	if _, err := conv.Run(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	slow := make(chan *onion.Result)
	go func() {
		res, err := conv.Run(ctx, "slow")
		if err != nil {
			t.Error(err)
		}
		slow <- res
	}()
	<-arrived
	if _, err := conv.Run(ctx, "fast"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if res := <-slow; res == nil || len(res.Compactions) != 1 {
		t.Fatalf("the slow run: %+v, want one compaction", res)
	}
	h := conv.History()
	got := historyLines(h)
	if len(got) != 8 || got[2] != "tool: "+loop.ToolResultNote("big", 2100) ||
		!slices.Equal(got[4:], []string{"user: fast", "assistant: re fast", "user: slow", "assistant: re slow"}) {
		t.Errorf("the conversation is %q", got)
	}
}

// TestConversationFailedRunKeepsNoCompaction: a run that compacted the
// history and then failed leaves the conversation as it was; the next run
// compacts it again and keeps that.
func TestConversationFailedRunKeepsNoCompaction(t *testing.T) {
	s := oniontest.NewServer(t)
	s.Add(oniontest.Func(bigResults(nil, nil)), oniontest.Func(bigResults(nil, nil)),
		oniontest.Error(400, `{"error":{"message":"no","type":"invalid_request_error"}}`), oniontest.Func(echo))
	conv := bigAgent(t, s, onion.Retries(0)).NewConversation()
	ctx := context.Background()
	if _, err := conv.Run(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	before := historyLines(conv.History())
	if _, err := conv.Run(ctx, "this fails"); err == nil {
		t.Fatal("the refused run succeeded")
	}
	if got := historyLines(conv.History()); !slices.Equal(got, before) {
		t.Fatalf("the failed run changed the conversation to %q", got)
	}
	res, err := conv.Run(ctx, "again")
	if err != nil || len(res.Compactions) != 1 {
		t.Fatalf("%+v, %v: want one compaction", res, err)
	}
	note := "tool: " + loop.ToolResultNote("big", 2100)
	if got := historyLines(conv.History()); len(got) != 6 || got[2] != note || got[4] != "user: again" {
		t.Errorf("the conversation is %q", got)
	}
	if got := turns(s.Requests()[3]); got[2] != note {
		t.Errorf("the request after the failed run carries %q", got)
	}
}
