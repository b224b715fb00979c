package loop_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

// compactLoop is a loop with one read tool, "fetch", and compaction at
// after tokens with strategy s.
func compactLoop(t *testing.T, after int, s loop.CompactStrategy) *loop.Loop {
	t.Helper()
	l, err := loop.New(loop.Config{
		Model: "m", SystemPrompt: "be brief",
		Tools:         []loop.Tool{{Def: loop.ToolDef{Name: "fetch", Parameters: json.RawMessage(`{"type":"object"}`)}, Intent: loop.Read}},
		MaxIterations: 100, CompactAfter: after, CompactStrategy: s,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fetchRun drives a run of l: each round the model calls fetch once (with
// thought as its text) and the tool returns result; it returns the
// effects of every step, the last ones last.
type fetchRun struct {
	t       *testing.T
	l       *loop.Loop
	st      *loop.State
	effects []loop.Effect // of the last step
	round   int
	// prompt is the server's count of each request: 0 reports none.
	prompt func(*loop.Request) int
}

func newFetchRun(t *testing.T, l *loop.Loop, history []loop.Message) *fetchRun {
	t.Helper()
	st, effects := l.Start("r", 1, history, "find it")
	return &fetchRun{t: t, l: l, st: st, effects: effects}
}

func (r *fetchRun) step(in loop.Input) {
	r.t.Helper()
	in.Now = t0
	effects, err := r.l.Step(r.st, in)
	if err != nil {
		r.t.Fatal(err)
	}
	r.effects = effects
}

// request is the AskModel request of the last step.
func (r *fetchRun) request() *loop.Effect {
	r.t.Helper()
	for i := range r.effects {
		if r.effects[i].Kind == loop.AskModel {
			return &r.effects[i]
		}
	}
	r.t.Fatalf("no AskModel among %v", show(r.effects))
	return nil
}

// compactions are the EventCompacted reports of the last step.
func (r *fetchRun) compactions() []loop.Compaction {
	var out []loop.Compaction
	for _, e := range r.effects {
		if e.Kind == loop.Emit && e.Event == loop.EventCompacted {
			out = append(out, *e.Compaction)
		}
	}
	return out
}

// round answers the pending model request with a call of fetch, and the
// call with result.
func (r *fetchRun) fetch(thought, result string) {
	r.t.Helper()
	r.round++
	id := fmt.Sprint("c", r.round)
	resp := &loop.Response{ID: fmt.Sprint("resp", r.round), Message: loop.Message{Content: thought,
		ToolCalls: []loop.ToolRequest{{ID: id, Name: "fetch", Arguments: `{"page":` + fmt.Sprint(r.round) + `}`}}}}
	if r.prompt != nil {
		resp.Usage.PromptTokens = r.prompt(r.request().Request)
	}
	r.step(loop.Input{Reply: resp})
	r.step(loop.Input{Done: &loop.Done{CallID: id, Output: result}})
}

// TestCompactAtThreshold: a request estimated at exactly CompactAfter
// goes as it is; one token over, the older tool results become notes.
func TestCompactAtThreshold(t *testing.T) {
	big := strings.Repeat("data ", 400) // 2,000 bytes
	// The estimate of the third request, uncompacted.
	plain := newFetchRun(t, compactLoop(t, 0, ""), nil)
	plain.fetch("", big)
	plain.fetch("", big)
	third := loop.EstimateTokens(plain.request().Request)

	at := newFetchRun(t, compactLoop(t, third, ""), nil)
	at.fetch("", big)
	at.fetch("", big)
	if c := at.compactions(); len(c) != 0 || len(at.st.Result.Compactions) != 0 {
		t.Errorf("at the threshold (%d tokens): compactions %+v", third, c)
	}
	if got := loop.EstimateTokens(at.request().Request); got != third {
		t.Errorf("at the threshold the request is %d tokens, want %d", got, third)
	}

	over := newFetchRun(t, compactLoop(t, third-1, ""), nil)
	over.fetch("", big)
	if c := over.compactions(); len(c) != 0 {
		t.Errorf("the second request, under the threshold, was compacted: %+v", c)
	}
	over.fetch("", big)
	c := over.compactions()
	if len(c) != 1 || c[0].Before != third || c[0].ToolResults != 1 || c[0].Summarized != 0 || c[0].Iteration != 3 || c[0].After >= c[0].Before {
		t.Fatalf("one token over: compactions %+v, want one from %d tokens leaving out 1 tool result", c, third)
	}
	if got := loop.EstimateTokens(over.request().Request); got != c[0].After {
		t.Errorf("the request sent is %d tokens, the event says %d", got, c[0].After)
	}
	msgs := over.request().Request.Messages
	if want := loop.ToolResultNote("fetch", 500); msgs[3].Content != want {
		t.Errorf("the first tool result is %q, want %q", msgs[3].Content, want)
	}
	if msgs[5].Content != big {
		t.Errorf("the current round's result was changed to %q", msgs[5].Content)
	}
	if kinds := show(over.effects); kinds[len(kinds)-3] != "compacted " || kinds[len(kinds)-2] != "iteration 3" {
		t.Errorf("effects %v: want the compaction reported just before the iteration", kinds)
	}
	if len(over.st.Result.Compactions) != 1 {
		t.Errorf("the result keeps %d compactions, want 1", len(over.st.Result.Compactions))
	}
}

// TestCompactKeepsTheUntouchable: the system prompt, the run's prompt and
// the current round's call and result go byte for byte as they would
// have; only older results change.
func TestCompactKeepsTheUntouchable(t *testing.T) {
	big := strings.Repeat("x", 4000)
	plain := newFetchRun(t, compactLoop(t, 0, ""), []loop.Message{{Role: loop.RoleUser, Content: "hello"}, {Role: loop.RoleAssistant, Content: "hi"}})
	small := newFetchRun(t, compactLoop(t, 1500, ""), []loop.Message{{Role: loop.RoleUser, Content: "hello"}, {Role: loop.RoleAssistant, Content: "hi"}})
	for i := 0; i < 4; i++ {
		plain.fetch("looking", big)
		small.fetch("looking", big)
	}
	want, got := plain.request().Request.Messages, small.request().Request.Messages
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d (notes replace, they do not remove)", len(got), len(want))
	}
	same := func(i int) bool {
		a, _ := json.Marshal(want[i])
		b, _ := json.Marshal(got[i])
		return bytes.Equal(a, b)
	}
	n := len(want)
	for _, i := range []int{0, 1, 2, 3, n - 1} { // system, history, prompt, current result
		if !same(i) {
			t.Errorf("message %d changed:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	// The current round's call, all but the provider's ID, which names
	// the uncompacted conversation.
	cur, old := got[n-2], want[n-2]
	old.ResponseID = ""
	a, _ := json.Marshal(old)
	b, _ := json.Marshal(cur)
	if !bytes.Equal(a, b) {
		t.Errorf("the current round's call changed:\n got %s\nwant %s", b, a)
	}
	notes := 0
	for i := 4; i < n-2; i++ {
		if got[i].Role == loop.RoleTool {
			if got[i].Content != loop.ToolResultNote("fetch", 1000) {
				t.Errorf("older result %d is %q", i, got[i].Content)
			}
			notes++
		}
	}
	if notes != 3 {
		t.Errorf("%d notes, want the 3 older results", notes)
	}
	for i, m := range got {
		if m.ResponseID != "" {
			t.Errorf("message %d still names response %s after a compaction", i, m.ResponseID)
		}
	}
}

// TestCompactSummarizes: when notes are not enough, one request without
// tools asks for a summary of the older turns, which then replace them;
// the prompt and the current round stay.
func TestCompactSummarizes(t *testing.T) {
	thought := strings.Repeat("I think so. ", 100) // 1,200 bytes of text that no note can shorten
	l := compactLoop(t, 600, "")
	r := newFetchRun(t, l, []loop.Message{{Role: loop.RoleUser, Content: "hello"}, {Role: loop.RoleAssistant, Content: "hi"}})
	r.fetch(thought, "r1")
	r.fetch(thought, "r2")
	ask := r.request()
	if !ask.Summary || len(ask.Request.Tools) != 0 || len(ask.Request.Messages) != 2 || ask.Request.Messages[0].Content != loop.SummaryPrompt {
		t.Fatalf("want a summary request, got %+v", ask)
	}
	transcript := ask.Request.Messages[1].Content
	for _, s := range []string{"hello", "[assistant]\nhi", "[assistant called fetch]\n{\"page\":1}", "[result of fetch]\nr1", "<user>\nfind it\n</user>"} {
		if !strings.Contains(transcript, s) {
			t.Errorf("the transcript lacks %q:\n%s", s, transcript)
		}
	}
	if strings.Contains(transcript, "r2") {
		t.Errorf("the transcript holds the current round's result:\n%s", transcript)
	}
	if r.st.Phase != loop.AwaitingSummary {
		t.Errorf("phase %s", r.st.Phase)
	}
	if p := r.l.Pending(r.st); len(p) != 1 || !p[0].Summary {
		t.Errorf("pending %+v, want the summary request again", p)
	}
	cur := append([]loop.Message(nil), r.st.Messages[len(r.st.Messages)-2:]...)
	r.step(loop.Input{Reply: &loop.Response{Message: loop.Message{Content: "  they said hello; page 1 said r1  "},
		Usage: loop.Usage{PromptTokens: 300, CompletionTokens: 10, TotalTokens: 310}}})
	c := r.compactions()
	if len(c) != 1 || c[0].Summarized != 4 || c[0].After >= c[0].Before {
		t.Fatalf("compactions %+v, want one summarizing the 4 older messages", c)
	}
	// The summary is kept as an assistant message before the prompt, and
	// sent as the start of the first user turn, as strict chat templates
	// want the first turn a user's.
	if m := r.st.Messages[0]; m.Role != loop.RoleAssistant || m.Content != loop.SummaryPrefix+"they said hello; page 1 said r1" {
		t.Errorf("the summary message is %+v", m)
	}
	msgs := r.request().Request.Messages
	if r.request().Summary || len(msgs) != 4 {
		t.Fatalf("the request after the summary: %+v", msgs)
	}
	if msgs[1].Role != loop.RoleUser || msgs[1].Content != loop.SummaryPrefix+"they said hello; page 1 said r1\n\nfind it" {
		t.Errorf("the first user turn is %+v", msgs[1])
	}
	cur[0].ResponseID = ""
	if a, b := fmt.Sprint(cur), fmt.Sprint(msgs[2:]); a != b {
		t.Errorf("the current round changed:\n got %s\nwant %s", b, a)
	}
	if r.st.Start != 1 || r.st.Result.Usage.Requests != 3 || r.st.Result.Usage.PromptTokens != 300 {
		t.Errorf("start %d, usage %+v: want the summary counted", r.st.Start, r.st.Result.Usage)
	}
	// The next round compacts again, the old summary among the turns.
	r.fetch(thought, "r3")
	if ask := r.request(); !ask.Summary || !strings.Contains(ask.Request.Messages[1].Content, "page 1 said r1") {
		t.Errorf("the second summary request: %+v", ask)
	}
}

// TestCompactToolResultsOnly: that strategy never asks for a summary.
func TestCompactToolResultsOnly(t *testing.T) {
	r := newFetchRun(t, compactLoop(t, 600, loop.CompactToolResults), nil)
	for i := 0; i < 5; i++ {
		r.fetch(strings.Repeat("words ", 200), strings.Repeat("y", 800))
		if r.request().Summary {
			t.Fatalf("round %d asked for a summary", i+1)
		}
	}
	if len(r.st.Result.Compactions) == 0 {
		t.Error("no compaction")
	}
}

// TestCompactScalesByTheServersCount: a server that counts twice the
// estimate makes the loop compact at half the size; one that reports a
// count far off (a double's fixed usage) is not believed.
func TestCompactScalesByTheServersCount(t *testing.T) {
	big := strings.Repeat("z", 2000)
	for _, tc := range []struct {
		name   string
		prompt func(*loop.Request) int
		want   bool
	}{
		{"none", nil, false},
		{"same", func(r *loop.Request) int { return loop.EstimateTokens(r) }, false},
		{"double", func(r *loop.Request) int { return 2 * loop.EstimateTokens(r) }, true},
		{"fixed", func(*loop.Request) int { return 10 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFetchRun(t, compactLoop(t, 1300, ""), nil)
			r.prompt = tc.prompt
			r.fetch("", big) // the second request: about 560 tokens as estimated
			r.fetch("", big) // the third: about 1,100
			if got := len(r.compactions()) > 0; got != tc.want {
				t.Errorf("compacted %v, want %v (%+v)", got, tc.want, r.st.Compact)
			}
			if r.request().Summary {
				t.Errorf("asked for a summary: %+v", r.st.Compact.Pending)
			}
		})
	}
}

// TestCompactReplay: a run that compacts both ways gives the same effects
// when replayed, and when its State is decoded from JSON before each step.
func TestCompactReplay(t *testing.T) {
	l := compactLoop(t, 900, "")
	drive := func(checkpoint bool) []byte {
		st, effects := l.Start("r", 1, []loop.Message{{Role: loop.RoleUser, Content: strings.Repeat("old ", 300)}}, "go")
		var all bytes.Buffer
		enc := json.NewEncoder(&all)
		_ = enc.Encode(effects)
		for i := 0; i < 30 && st.Phase != loop.Finished; i++ {
			if checkpoint {
				b, _ := json.Marshal(st)
				st = new(loop.State)
				if err := json.Unmarshal(b, st); err != nil {
					t.Fatal(err)
				}
			}
			var in loop.Input
			switch p := l.Pending(st); {
			case st.Phase == loop.AwaitingSummary:
				in.Reply = &loop.Response{Message: loop.Message{Content: fmt.Sprint("summary ", i)}, Usage: loop.Usage{PromptTokens: 100}}
			case st.Phase == loop.AwaitingModel && i > 20:
				in.Reply = &loop.Response{Message: loop.Message{Content: "done"}}
			case st.Phase == loop.AwaitingModel:
				in.Reply = &loop.Response{ID: fmt.Sprint("resp", i), Message: loop.Message{Content: strings.Repeat("hmm ", 50),
					ToolCalls: []loop.ToolRequest{{ID: fmt.Sprint("c", i), Name: "fetch", Arguments: "{}"}}},
					Usage: loop.Usage{PromptTokens: loop.EstimateTokens(p[0].Request) * 5 / 4}}
			default:
				in.Done = &loop.Done{CallID: p[0].Call.ID, Output: strings.Repeat("result ", 150)}
			}
			in.Now = t0
			effects, err := l.Step(st, in)
			if err != nil {
				t.Fatal(err)
			}
			_ = enc.Encode(effects)
		}
		if st.Phase != loop.Finished {
			t.Fatalf("phase %s", st.Phase)
		}
		return all.Bytes()
	}
	first, again, resumed := drive(false), drive(false), drive(true)
	if !bytes.Equal(first, again) || !bytes.Equal(first, resumed) {
		t.Errorf("replays differ:\n%s\n%s\n%s", first, again, resumed)
	}
	for _, want := range []string{`"summary":true`, `"tool_results":`, `"summarized":`} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("the run never produced %s", want)
		}
	}
}

// TestCompactSummarizesTheHistory: a history too long for the first
// request is summarized before it, the prompt kept after the summary.
func TestCompactSummarizesTheHistory(t *testing.T) {
	history := []loop.Message{{Role: loop.RoleUser, Content: strings.Repeat("a", 2000)}, {Role: loop.RoleAssistant, Content: strings.Repeat("b", 2000)}}
	r := newFetchRun(t, compactLoop(t, 200, ""), history)
	if !r.request().Summary || r.st.Iteration != 1 {
		t.Fatalf("want a summary of the long history first, got %v", show(r.effects))
	}
	r.step(loop.Input{Reply: &loop.Response{Message: loop.Message{Content: "they said a and b"}}})
	if c := r.compactions(); len(c) != 1 || c[0].Summarized != 2 || c[0].Iteration != 1 {
		t.Fatalf("compactions %+v", c)
	}
	msgs := r.request().Request.Messages
	if len(msgs) != 2 || msgs[1].Role != loop.RoleUser || msgs[1].Content != loop.SummaryPrefix+"they said a and b\n\nfind it" || r.st.Start != 1 {
		t.Errorf("the first request: %+v, start %d", msgs, r.st.Start)
	}
}

// TestCompactStopWhileSummarizing: a run told to stop while it waits for
// its summary finishes at once.
func TestCompactStopWhileSummarizing(t *testing.T) {
	r := newFetchRun(t, compactLoop(t, 200, ""), []loop.Message{{Role: loop.RoleUser, Content: strings.Repeat("a", 2000)}})
	if !r.request().Summary {
		t.Fatalf("want a summary of the long history first, got %v", show(r.effects))
	}
	r.step(loop.Input{Stop: &loop.Stop{Reason: loop.StopCanceled}})
	if r.st.Phase != loop.Finished || r.effects[len(r.effects)-1].Result.StopReason != loop.StopCanceled {
		t.Errorf("effects %v", show(r.effects))
	}
}

// TestCompactWithoutItIsUnchanged: a loop without CompactAfter keeps no
// compaction state, so that its State encodes as before.
func TestCompactWithoutItIsUnchanged(t *testing.T) {
	r := newFetchRun(t, compactLoop(t, 0, ""), nil)
	r.prompt = func(*loop.Request) int { return 1 << 20 }
	for i := 0; i < 3; i++ {
		r.fetch("", strings.Repeat("q", 10000))
	}
	b, _ := json.Marshal(r.st)
	if bytes.Contains(b, []byte(`"compact`)) {
		t.Errorf("the State holds compaction: %s", b)
	}
}

func TestCompactConfig(t *testing.T) {
	for _, cfg := range []loop.Config{{CompactAfter: -1}, {CompactAfter: 10, CompactStrategy: "magic"}} {
		if _, err := loop.New(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	if got := loop.ToolResultNote("web_fetch", 3120); got != "[tool result of web_fetch (3,120 tokens) left out to save space]" {
		t.Errorf("note %q", got)
	}
}

// FuzzCompact drives runs with compaction through replies, results,
// summaries and server counts of the sizes the fuzzer picks, and holds the
// loop to its promises: no panic, a State that survives JSON, the prompt
// never changed, every tool message still answering a call of the
// assistant message before it, the current round's call and result sent
// as they came, and a Finish at the end.
func FuzzCompact(f *testing.F) {
	f.Add(uint16(500), []byte{10, 200, 3, 255, 0, 40, 90, 90, 90}, uint8(0))
	f.Add(uint16(50), []byte{255, 255, 255, 255, 1, 255}, uint8(1))
	f.Add(uint16(3000), []byte{255, 128, 255, 7, 255, 255, 255, 0}, uint8(2))
	f.Fuzz(func(t *testing.T, after uint16, sizes []byte, flags uint8) {
		if len(sizes) > 60 {
			sizes = sizes[:60]
		}
		strategy := loop.CompactSummarize
		if flags&1 != 0 {
			strategy = loop.CompactToolResults
		}
		l := compactLoop(t, int(after)+1, strategy)
		var history []loop.Message
		if flags&2 != 0 {
			history = []loop.Message{{Role: loop.RoleUser, Content: "before"},
				{Role: loop.RoleAssistant, ResponseID: "old", ToolCalls: []loop.ToolRequest{{ID: "h1", Name: "fetch", Arguments: "{}"}}},
				{Role: loop.RoleTool, ToolCallID: "h1", Name: "fetch", Content: strings.Repeat("h", 3000)},
				{Role: loop.RoleAssistant, Content: "said before"}}
		}
		var st *loop.State
		var args, output string // of the current round
		// check holds the effects of a step to the promises; done says the
		// step's input was the current round's result.
		check := func(effects []loop.Effect, done bool) {
			t.Helper()
			for _, e := range effects {
				if e.Kind == loop.Emit && e.Event == loop.EventCompacted && e.Compaction.ToolResults+e.Compaction.Summarized == 0 {
					t.Fatalf("a compaction that did nothing: %+v", e.Compaction)
				}
				if e.Kind == loop.Emit && e.Event == loop.EventCompacted {
					for j, m := range st.Messages {
						if m.ResponseID != "" {
							t.Fatalf("message %d still names response %s after a compaction", j, m.ResponseID)
						}
					}
				}
				if e.Kind != loop.AskModel || e.Summary {
					continue
				}
				msgs := e.Request.Messages
				for j, m := range msgs {
					if m.Role != loop.RoleTool {
						continue
					}
					k := j - 1
					for k > 0 && msgs[k].Role == loop.RoleTool {
						k--
					}
					if !slices.ContainsFunc(msgs[k].ToolCalls, func(c loop.ToolRequest) bool { return c.ID == m.ToolCallID }) {
						t.Fatalf("tool message %d answers %s, which message %d did not call", j, m.ToolCallID, k)
					}
				}
				if last := msgs[len(msgs)-1]; done && (last.Content != output || msgs[len(msgs)-2].ToolCalls[0].Arguments != args) {
					t.Fatalf("the current round went as %.40q after %.40q", last.Content, msgs[len(msgs)-2].ToolCalls[0].Arguments)
				}
			}
		}
		st, effects := l.Start("f", 1, history, "the prompt")
		check(effects, false)
		for i := 0; st.Phase != loop.Finished; i++ {
			b := 0
			if i < len(sizes) {
				b = int(sizes[i])
			}
			var in loop.Input
			switch p := l.Pending(st); {
			case st.Phase == loop.AwaitingSummary:
				in.Reply = &loop.Response{Message: loop.Message{Content: strings.Repeat("s", b*4)}}
			case st.Phase == loop.AwaitingModel && i >= len(sizes):
				in.Reply = &loop.Response{Message: loop.Message{Content: "the end"}}
			case st.Phase == loop.AwaitingModel:
				args = `{"q":"` + strings.Repeat("a", b*8) + `"}`
				in.Reply = &loop.Response{ID: fmt.Sprint("resp", i), Message: loop.Message{Content: strings.Repeat("t", b*2),
					ToolCalls: []loop.ToolRequest{{ID: fmt.Sprint("c", i), Name: "fetch", Arguments: args}}},
					Usage: loop.Usage{PromptTokens: loop.EstimateTokens(p[0].Request) * (b%7 + 1) / 3}}
			default:
				output = strings.Repeat("o", b*50)
				in.Done = &loop.Done{CallID: p[0].Call.ID, Output: output}
			}
			in.Now = t0
			var err error
			if effects, err = l.Step(st, in); err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			st = new(loop.State)
			if err := json.Unmarshal(data, st); err != nil {
				t.Fatal(err)
			}
			if p := st.Messages[st.Start]; p.Role != loop.RoleUser || p.Content != "the prompt" {
				t.Fatalf("the prompt became %+v", p)
			}
			check(effects, in.Done != nil)
			if i > 3*len(sizes)+10 {
				t.Fatalf("the run did not finish: phase %s", st.Phase)
			}
		}
	})
}
