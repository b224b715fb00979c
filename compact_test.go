package onion_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// page is what WebFetch returns: 12,000 bytes, about 3,000 tokens.
var page = strings.Repeat("lorem ipsum ", 1000)

// WebFetch returns the page at url.
//
//onion:intent read
func WebFetch(ctx context.Context, url string) (string, error) { return page, nil }

// compactWires are the wires compaction is tested on.
var compactWires = []struct {
	name string
	opts []any
}{
	{"chat", nil},
	{"responses", []any{onion.ResponsesAPI()}},
}

// fetcher scripts a model on oniontest: each request calls web_fetch
// (with args as the url) until it has made rounds calls, then it answers
// "done"; a summary request is answered with a summary. It reports the
// prompt tokens of each request as a quarter of its body's bytes, as a
// server that counts them would.
type fetcher struct {
	rounds int
	args   string
	count  bool // report len(body)/4 as the prompt tokens

	mu        sync.Mutex
	calls     int
	summaries int
}

func (f *fetcher) step(req oniontest.Request) oniontest.Step {
	f.mu.Lock()
	defer f.mu.Unlock()
	var s oniontest.Step
	switch {
	case isSummaryRequest(req):
		f.summaries++
		s = oniontest.Text(fmt.Sprintf("summary %d: the pages said lorem ipsum", f.summaries))
	case f.calls < f.rounds:
		f.calls++
		s = oniontest.ToolCalls(oniontest.Call("web_fetch", fmt.Sprintf(`{"url":%q}`, fmt.Sprint(f.args, f.calls))))
	default:
		s = oniontest.Text("done")
	}
	if f.count {
		s = s.WithUsage(len(req.Raw)/4, 5)
	}
	return s
}

// server starts oniontest with enough of f's steps for a run of it.
func (f *fetcher) server(t *testing.T) *oniontest.Server {
	steps := make([]oniontest.Step, 3*f.rounds+10)
	for i := range steps {
		steps[i] = oniontest.Func(f.step)
	}
	return oniontest.NewServer(t, steps...)
}

func isSummaryRequest(req oniontest.Request) bool {
	m := req.Body.Messages
	return len(m) > 0 && m[0].Role == openai.ChatMessageRoleSystem && m[0].Content == loop.SummaryPrompt
}

// fetchRun runs "read the pages" on a new agent of f's server with opts.
func fetchRun(t *testing.T, f *fetcher, opts ...any) (*onion.Result, *oniontest.Server) {
	t.Helper()
	s := f.server(t)
	a := newAgent(t, s, append([]any{WebFetch, onion.MaxIterations(100)}, opts...)...)
	res, err := a.Run(context.Background(), "read the pages")
	if err != nil {
		t.Fatal(err)
	}
	return res, s
}

// TestCompactAfterAtTheThreshold: a request estimated at exactly the
// threshold goes whole; one token more and the older tool result is
// replaced by its note, the current one kept.
func TestCompactAfterAtTheThreshold(t *testing.T) {
	for _, w := range compactWires {
		t.Run(w.name, func(t *testing.T) {
			// The third request, with two results of about 3,000 tokens, is
			// the first over 4,500: its estimate before compaction.
			res, _ := fetchRun(t, &fetcher{rounds: 2}, append(w.opts, onion.CompactAfter(4500))...)
			if len(res.Compactions) != 1 || res.Compactions[0].Iteration != 3 {
				t.Fatalf("compactions %+v, want one at the third request", res.Compactions)
			}
			third := res.Compactions[0].Before

			res, s := fetchRun(t, &fetcher{rounds: 2}, append(w.opts, onion.CompactAfter(third))...)
			if len(res.Compactions) != 0 {
				t.Errorf("at the threshold (%d): compactions %+v", third, res.Compactions)
			}
			if got := s.Requests()[2].ToolResults(); len(got) != 2 || got[0].Content != page || got[1].Content != page {
				t.Errorf("at the threshold the results were not sent whole")
			}

			res, s = fetchRun(t, &fetcher{rounds: 2}, append(w.opts, onion.CompactAfter(third-1))...)
			if len(res.Compactions) != 1 || res.Compactions[0].Before != third || res.Compactions[0].ToolResults != 1 {
				t.Fatalf("one token over: compactions %+v", res.Compactions)
			}
			got := s.Requests()[2].ToolResults()
			if note := loop.ToolResultNote("web_fetch", 3000); len(got) != 2 || got[0].Content != note || got[1].Content != page {
				t.Errorf("one token over, the results sent are %d, want the first replaced by %q and the second whole", len(got), note)
			}
			if res.Output != "done" || len(res.ToolCalls) != 2 || res.ToolCalls[0].Output != page {
				t.Errorf("result %+v: compaction changes what is sent, not what the run records", res)
			}
		})
	}
}

// TestCompactAfterKeepsTheUntouchable: the system prompt, the prompt and
// the current round's call and result go byte for byte as without
// compaction; older results are notes, and nothing else changes.
func TestCompactAfterKeepsTheUntouchable(t *testing.T) {
	for _, w := range compactWires {
		t.Run(w.name, func(t *testing.T) {
			opts := append(w.opts, onion.SystemPrompt("Read every page."))
			_, plain := fetchRun(t, &fetcher{rounds: 4}, opts...)
			_, small := fetchRun(t, &fetcher{rounds: 4}, append(opts, onion.CompactAfter(5000))...)
			for n := range plain.Requests() {
				want, got := plain.Requests()[n].Body.Messages, small.Requests()[n].Body.Messages
				if len(got) != len(want) {
					t.Fatalf("request %d: %d messages, want %d", n, len(got), len(want))
				}
				last := len(want) - 1
				for i := range want {
					a, _ := json.Marshal(want[i])
					b, _ := json.Marshal(got[i])
					if string(a) == string(b) {
						continue
					}
					if i == 0 || i == 1 || (n > 0 && i >= last-1) {
						t.Errorf("request %d: message %d (the system prompt, the prompt or the current round) changed:\n got %.200s\nwant %.200s", n, i, b, a)
					}
					if want[i].Role != openai.ChatMessageRoleTool || got[i].Content != loop.ToolResultNote("web_fetch", 3000) {
						t.Errorf("request %d: message %d is %.200s, want %.200s or its note", n, i, b, a)
					}
				}
			}
			if w.name == "responses" {
				// The current round's items themselves, as sent.
				for n := 1; n < len(plain.Requests()); n++ {
					want, got := plain.Requests()[n].Responses, small.Requests()[n].Responses
					if got.Instructions != want.Instructions {
						t.Errorf("request %d: instructions changed", n)
					}
					a, b := want.Input[len(want.Input)-2:], got.Input[len(got.Input)-2:]
					if string(a[0].Raw) != string(b[0].Raw) || string(a[1].Raw) != string(b[1].Raw) {
						t.Errorf("request %d: the current round's items changed:\n got %s %.80s\nwant %s %.80s", n, b[0].Raw, b[1].Raw, a[0].Raw, a[1].Raw)
					}
				}
			}
		})
	}
}

// TestCompactAfterSummarizes: when the notes are not enough (the calls'
// own arguments are long), one request without tools asks for a summary,
// and the next request carries it in place of the older turns, the prompt
// and the current round after it. The summary is not streamed as text.
func TestCompactAfterSummarizes(t *testing.T) {
	for _, w := range compactWires {
		t.Run(w.name, func(t *testing.T) {
			// Each call's arguments are about 1,500 tokens, each result 3,000:
			// the third request is over 5,000 even with the first result's note.
			f := &fetcher{rounds: 2, args: "https://example.com/" + strings.Repeat("very-long-path/", 400)}
			s := f.server(t)
			a := newAgent(t, s, append(w.opts, WebFetch, onion.CompactAfter(5000))...)
			var events []onion.Event
			var text strings.Builder
			for e, err := range a.Stream(context.Background(), "read the pages") {
				if err != nil {
					t.Fatal(err)
				}
				events = append(events, e)
				if e.Kind == onion.EventTextDelta {
					text.WriteString(e.Text)
				}
			}
			res := events[len(events)-1].Result
			if res.Output != "done" || text.String() != "done" {
				t.Errorf("output %q, streamed %q: want only the answer streamed", res.Output, text.String())
			}
			reqs := s.Requests()
			n := slices.IndexFunc(reqs, isSummaryRequest)
			if n < 0 || f.summaries != 1 {
				t.Fatalf("%d summary requests", f.summaries)
			}
			sum := reqs[n]
			if len(sum.Body.Tools) != 0 || len(sum.Body.Messages) != 2 || !strings.Contains(sum.Body.Messages[1].Content, "<user>\nread the pages\n</user>") {
				t.Errorf("the summary request: %.400s", sum.Raw)
			}
			next := reqs[n+1].Body.Messages
			// The summary starts the first user turn, as strict chat
			// templates want the first turn a user's.
			if len(next) != 4 || next[1].Role != "user" || next[1].Content != loop.SummaryPrefix+"summary 1: the pages said lorem ipsum\n\nread the pages" ||
				len(next[2].ToolCalls) != 1 || next[3].Content != page {
				t.Errorf("the request after the summary: %.600s", reqs[n+1].Raw)
			}
			var compacted []onion.Event
			for i, e := range events {
				if e.Kind == onion.EventCompacted {
					compacted = append(compacted, e)
					if i+1 >= len(events) || events[i+1].Kind != onion.EventIteration || events[i+1].Iteration != e.Iteration {
						t.Errorf("the compaction event is not followed by its request's iteration")
					}
				}
			}
			if len(compacted) != 1 || compacted[0].Compaction.Summarized != 2 || compacted[0].Compaction.ToolResults != 1 || compacted[0].Compaction.After >= compacted[0].Compaction.Before ||
				!slices.Equal(res.Compactions, []onion.Compaction{*compacted[0].Compaction}) {
				t.Errorf("compaction events %+v, result's %+v", compacted, res.Compactions)
			}
			if res.Usage.Requests != len(reqs) {
				t.Errorf("usage counts %d requests, the server got %d", res.Usage.Requests, len(reqs))
			}
		})
	}
}

// TestCompactAfterBreaksTheChain: with ChainResponses, the request after a
// compaction does not continue the stored (uncompacted) conversation: it
// sends the compacted one whole, and the next continues from its answer.
func TestCompactAfterBreaksTheChain(t *testing.T) {
	// The fourth request, with three results, is the first over 7,000.
	res, s := fetchRun(t, &fetcher{rounds: 4}, onion.ChainResponses(), onion.CompactAfter(7000))
	if len(res.Compactions) != 1 || res.Compactions[0].Iteration != 4 {
		t.Fatalf("compactions %+v, want one at the fourth request", res.Compactions)
	}
	reqs := s.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	if prev := reqs[2].Responses.PreviousResponseID; prev != "resp_oniontest_2" {
		t.Errorf("the third request continues %q, want the chain before compaction", prev)
	}
	fourth := reqs[3].Responses
	if fourth.PreviousResponseID != "" || fourth.Store == nil || !*fourth.Store {
		t.Errorf("the compacted request continues %q (store %v): it must send the compacted conversation whole", fourth.PreviousResponseID, fourth.Store)
	}
	got := itemTypes(inputItems(t, s, 3))
	want := []string{"message:user", "function_call:call_1", "function_call_output:call_1", "function_call:call_2", "function_call_output:call_2",
		"function_call:call_3", "function_call_output:call_3"}
	if !slices.Equal(got, want) {
		t.Errorf("the compacted request sends %q, want %q", got, want)
	}
	note := loop.ToolResultNote("web_fetch", 3000)
	if in := fourth.Input; len(in) != 7 || in[2].Output != note || in[4].Output != note || in[6].Output != page {
		t.Errorf("the results went as %.40q, %.40q, %.40q: want two notes and the current one whole", in[2].Output, in[4].Output, in[6].Output)
	}
	if prev := reqs[4].Responses.PreviousResponseID; prev != "resp_oniontest_4" {
		t.Errorf("the request after continues %q, want the compacted request's answer", prev)
	}
	if got := itemTypes(inputItems(t, s, 4)); !slices.Equal(got, []string{"function_call_output:call_4"}) {
		t.Errorf("the request after sends %q, want only the new result", got)
	}
}

// TestCompactAfterOptions: the options refuse what cannot work.
func TestCompactAfterOptions(t *testing.T) {
	for _, o := range []onion.Option{onion.CompactAfter(0), onion.CompactWith("magic")} {
		if _, err := onion.NewAgent("a", o, onion.APIKey("k")); err == nil {
			t.Errorf("%v: no error", o)
		}
	}
	// CompactToolResults never asks for a summary.
	f := &fetcher{rounds: 3, args: strings.Repeat("x", 8000)}
	res, _ := fetchRun(t, f, onion.CompactAfter(4000), onion.CompactWith(onion.CompactToolResults))
	if f.summaries != 0 || len(res.Compactions) == 0 {
		t.Errorf("%d summaries, compactions %+v", f.summaries, res.Compactions)
	}
}

// TestCompactAfter50Iterations measures the prompt tokens of a run of 50
// requests, 49 of which follow a result of about 3,000 tokens, with and
// without compaction, as the server counts them (a quarter of each body's
// bytes) and as the sum of the bytes sent.
func TestCompactAfter50Iterations(t *testing.T) {
	measure := func(opts ...any) (tokens, bytes int, res *onion.Result) {
		res, s := fetchRun(t, &fetcher{rounds: 49, count: true}, opts...)
		for _, r := range s.Requests() {
			bytes += len(r.Raw)
		}
		if res.Usage.Requests != len(s.Requests()) || res.Output != "done" {
			t.Fatalf("result %+v", res)
		}
		return res.Usage.PromptTokens, bytes, res
	}
	plainTokens, plainBytes, plain := measure()
	tokens, bytes, res := measure(onion.CompactAfter(16000))
	t.Logf("50 requests, 49 results of ~3,000 tokens: %d prompt tokens (%d bytes) without compaction, %d (%d bytes) with CompactAfter(16000): %d compactions, %.1fx fewer",
		plainTokens, plainBytes, tokens, bytes, len(res.Compactions), float64(plainTokens)/float64(tokens))
	if plain.Usage.Requests != 50 || res.Usage.Requests != 50 {
		t.Errorf("requests %d and %d, want 50 each (notes need no summary)", plain.Usage.Requests, res.Usage.Requests)
	}
	if tokens*5 > plainTokens {
		t.Errorf("compaction saved too little: %d against %d", tokens, plainTokens)
	}
}

// TestCompactAfterReload: a conversation saved after a compacted run
// reloads compacted: the next request sends it as the run left it, on
// either wire, whether the compaction left out results (kept with
// KeepToolHistory) or summarized turns (kept by default).
func TestCompactAfterReload(t *testing.T) {
	for _, w := range compactWires {
		t.Run(w.name+"/notes", func(t *testing.T) {
			f := &fetcher{rounds: 4}
			s := f.server(t)
			a := newAgent(t, s, append(w.opts, WebFetch, onion.KeepToolHistory(), onion.CompactAfter(7000))...)
			conv := a.NewConversation()
			res, err := conv.Run(context.Background(), "read the pages")
			if err != nil || len(res.Compactions) != 1 {
				t.Fatalf("result %+v, err %v: want one compaction", res, err)
			}
			saved, err := conv.MarshalHistory()
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(saved), loop.ToolResultNote("web_fetch", 3000)); n != 2 {
				t.Errorf("the saved conversation holds %d notes, want 2", n)
			}
			last := s.Requests()[len(s.Requests())-1].Body.Messages

			again := a.NewConversation()
			if err := again.UnmarshalHistory(saved); err != nil {
				t.Fatal(err)
			}
			res, err = again.Run(context.Background(), "and now?")
			if err != nil || len(res.Compactions) != 0 {
				t.Fatalf("result %+v, err %v", res, err)
			}
			next := s.Requests()[len(s.Requests())-1].Body.Messages
			want := append(slices.Clone(last), openai.ChatCompletionMessage{Role: "assistant", Content: "done"}, openai.ChatCompletionMessage{Role: "user", Content: "and now?"})
			if a, b := chatJSON(want), chatJSON(next); a != b {
				t.Errorf("the request after reloading:\n got %.1500s\nwant %.1500s", b, a)
			}
		})
		t.Run(w.name+"/summary", func(t *testing.T) {
			f := &fetcher{rounds: 2, args: "https://example.com/" + strings.Repeat("very-long-path/", 400)}
			s := f.server(t)
			a := newAgent(t, s, append(w.opts, WebFetch, onion.CompactAfter(5000))...)
			conv := a.NewConversation()
			if _, err := conv.Run(context.Background(), "read the pages"); err != nil {
				t.Fatal(err)
			}
			saved, err := json.Marshal(conv)
			if err != nil {
				t.Fatal(err)
			}
			again := a.NewConversation()
			if err := json.Unmarshal(saved, again); err != nil {
				t.Fatal(err)
			}
			if _, err := again.Run(context.Background(), "and now?"); err != nil {
				t.Fatal(err)
			}
			next := s.Requests()[len(s.Requests())-1].Body.Messages
			want := []string{"system", "user " + loop.SummaryPrefix + "summary 1: the pages said lorem ipsum\n\nread the pages", "assistant done", "user and now?"}
			var got []string
			for _, m := range next {
				got = append(got, strings.TrimSpace(m.Role+" "+m.Content))
			}
			got[0] = "system"
			if !slices.Equal(got, want) {
				t.Errorf("the request after reloading sends %q, want %q", got, want)
			}
		})
	}
}

// TestCompactAfterRewritesTheHistory: a run that compacts the history it
// began with leaves its conversation compacted, the older run's results
// as notes.
func TestCompactAfterRewritesTheHistory(t *testing.T) {
	f := &fetcher{rounds: 2}
	s := f.server(t)
	a := newAgent(t, s, WebFetch, onion.KeepToolHistory(), onion.CompactAfter(7000))
	conv := a.NewConversation()
	if res, err := conv.Run(context.Background(), "read the pages"); err != nil || len(res.Compactions) != 0 {
		t.Fatalf("first run: %+v, %v: want no compaction", res, err)
	}
	f.mu.Lock()
	f.calls = 0 // two more rounds
	f.mu.Unlock()
	res, err := conv.Run(context.Background(), "read them again")
	if err != nil || len(res.Compactions) != 1 || res.Compactions[0].ToolResults != 2 {
		t.Fatalf("second run: %+v, %v: want one compaction of the first run's two results", res, err)
	}
	h := conv.History()
	var got []string
	for _, m := range h {
		if m.Role == onion.RoleTool {
			got = append(got, fmt.Sprintf("%.30s", m.Content))
		}
	}
	note := fmt.Sprintf("%.30s", loop.ToolResultNote("web_fetch", 3000))
	if want := []string{note, note, page[:30], page[:30]}; !slices.Equal(got, want) {
		t.Errorf("the conversation's results are %q, want %q", got, want)
	}
	if len(h) != 12 || h[0].Content != "read the pages" || h[6].Content != "read them again" || h[11].Content != "done" {
		t.Errorf("the conversation is %d messages: %+v", len(h), h)
	}
}

// chatJSON is msgs as JSON, to compare.
func chatJSON(msgs []openai.ChatCompletionMessage) string {
	b, _ := json.Marshal(msgs)
	return string(b)
}
