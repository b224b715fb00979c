package loop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// copiedRequest is the request as the loop built it before it kept a
// request buffer (#28): a copy of the whole conversation after the system
// message, reshaped by copiedAlternate, with copiedNote's notes. It is the
// reference the buffer is held to.
func copiedRequest(l *Loop, st *State) *Request {
	withTools := l.withTools(st)
	msgs := make([]Message, 0, len(st.Messages)+3)
	msgs = append(msgs, Message{Role: RoleSystem, Content: l.system})
	msgs = copiedAlternate(append(msgs, st.Messages...))
	req := &Request{Model: l.cfg.Model, Temperature: l.cfg.Temperature}
	switch {
	case withTools:
		req.Tools = l.defs
	case st.OverBudget:
		msgs = copiedNote(msgs, BudgetNote)
	case len(l.cfg.Tools) > 0:
		msgs = copiedNote(msgs, CapNote)
	}
	if l.cfg.TokenBudget > 0 {
		msgs = copiedNote(msgs, BudgetLine(l.budgetLeft(st), l.cfg.TokenBudget))
	}
	if st.Answer != nil {
		f := st.Answer.Format
		req.Format = &f
	}
	req.Messages = msgs
	return req
}

func copiedNote(msgs []Message, note string) []Message {
	switch last := &msgs[len(msgs)-1]; last.Role {
	case RoleUser, RoleTool:
		last.Content += noteJoin + note
		return msgs
	}
	return append(msgs, Message{Role: RoleUser, Content: note})
}

func copiedAlternate(msgs []Message) []Message {
	out := msgs[:0]
	seenUser := false
	for _, m := range msgs {
		if m.Role == RoleAssistant && !seenUser && len(m.ToolCalls) == 0 {
			m = Message{Role: RoleUser, Content: m.Content}
		}
		if m.Role == RoleUser {
			seenUser = true
			if prev := len(out) - 1; prev >= 0 && out[prev].Role == RoleUser {
				out[prev].Content += noteJoin + m.Content
				if len(m.Images) > 0 {
					out[prev].Images = append(out[prev].Images[:len(out[prev].Images):len(out[prev].Images)], m.Images...)
				}
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// TestRequestsAsCopied drives conversations of many runs, each started
// with StartAfter in the arrays of the run before, beside a twin that
// starts each run with StartPrompt after a copy of the same history, and
// at times goes on from a JSON copy of its State: at every step both get
// the same input and must give the same effects, byte for byte in JSON,
// and every request must be the one copiedRequest builds, and still be it
// when the step that answers it comes.
func TestRequestsAsCopied(t *testing.T) {
	for seed := range uint64(300) {
		script := make([]byte, 400)
		r := rand.New(rand.NewPCG(seed, 28))
		for i := range script {
			script[i] = byte(r.Uint32())
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { conversationAsCopied(t, script) })
	}
}

// FuzzRequestsAsCopied is TestRequestsAsCopied with the fuzzer's scripts.
func FuzzRequestsAsCopied(f *testing.F) {
	f.Add([]byte{0})
	f.Add(bytes.Repeat([]byte{7, 200, 13, 3, 91}, 60))
	f.Fuzz(conversationAsCopied)
}

// png is a PNG image of n bytes.
func png(n int) Image {
	return Image{MIMEType: "image/png", Data: append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, n)...)}
}

// conversationAsCopied is one conversation of TestRequestsAsCopied, its
// settings, history, prompts and inputs drawn from script.
func conversationAsCopied(t *testing.T, script []byte) {
	pick := func() byte {
		if len(script) == 0 {
			return 0
		}
		b := script[0]
		script = script[1:]
		return b
	}
	cfg := Config{Model: "m", SystemPrompt: "Be brief.", Tools: []Tool{
		{Def: ToolDef{Name: "read"}, Intent: Read},
		{Def: ToolDef{Name: "write"}},
		{Def: ToolDef{Name: "charge"}, Approval: true},
	}}
	switch b := pick(); {
	case b&1 != 0:
		cfg.MaxIterations = 1 + int(b>>1)%3
	case b&2 != 0:
		cfg.Tools = nil
	}
	if b := pick(); b&1 != 0 {
		cfg.TokenBudget = 300 + int(b)*8
	}
	if b := pick(); b&1 != 0 {
		cfg.CompactAfter = 200 + int(b)*2
		cfg.CompactStrategy = []CompactStrategy{CompactSummarize, CompactToolResults}[b>>1&1]
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var history []Message
	for range int(pick() % 6) {
		b := pick()
		m := Message{Role: []Role{RoleUser, RoleAssistant, RoleUser, RoleAssistant}[b%4], Content: strings.Repeat("earlier ", int(b%9))}
		if b&0x40 != 0 {
			m.Content = SummaryPrefix + m.Content
		}
		if m.Role == RoleUser && b&0x80 != 0 {
			m.Images = []Image{png(int(b))}
		}
		history = append(history, m)
	}
	// The twin's history is its own copy, as a conversation restored from
	// JSON would be.
	twinHistory := slices.Clone(history)
	var prev *State
	now := time.Unix(0, 0)
	for run := range 4 {
		prompt := Message{Content: fmt.Sprint("prompt ", run)}
		if b := pick(); b%5 == 0 {
			prompt.Images = []Image{png(int(b))}
		}
		var format *Format
		if pick()%4 == 0 {
			format = &Format{Name: "answer", Schema: json.RawMessage(`{"type":"object"}`)}
		}
		runID := fmt.Sprint("r", run)
		var st *State
		var effects []Effect
		if prev == nil {
			st, effects = l.StartPrompt(runID, 1, history, prompt, format)
		} else {
			st, effects = l.StartAfter(prev, runID, 1, prompt, format)
		}
		twin, twinEffects := l.StartPrompt(runID, 1, twinHistory, prompt, format)
		for step := 0; ; step++ {
			if step > 300 {
				t.Fatalf("run %d: no Finish after 300 steps", run)
			}
			got, want := mustJSON(t, effects), mustJSON(t, twinEffects)
			if !bytes.Equal(got, want) {
				t.Fatalf("run %d step %d: the effects of the run started after the last differ from the twin's:\n%s\n%s", run, step, got, want)
			}
			var next *Effect
			var sent []byte // the request waiting for its reply
			for i := range effects {
				switch e := &effects[i]; e.Kind {
				case AskModel:
					if !e.Summary {
						if want := mustJSON(t, copiedRequest(l, st)); !bytes.Equal(mustJSON(t, e.Request), want) {
							t.Fatalf("run %d step %d: request\n%s\nwant, as copied,\n%s", run, step, mustJSON(t, e.Request), want)
						}
					}
					next, sent = e, mustJSON(t, e.Request)
				case RunCall, AskApproval, CheckAnswer:
					next = e
				}
			}
			if st.Phase == Finished {
				break
			}
			if next == nil {
				next = &l.Pending(st)[0]
			}
			if b := pick(); b%11 == 0 {
				// Go on from a JSON copy of the twin; a struct copy of the
				// run's State, asked for what it waits for, builds a
				// request buffer of its own.
				var decoded State
				if err := json.Unmarshal(mustJSON(t, twin), &decoded); err != nil {
					t.Fatal(err)
				}
				twin = &decoded
				fork := *st
				if got, want := mustJSON(t, l.Pending(&fork)), mustJSON(t, l.Pending(st)); !bytes.Equal(got, want) {
					t.Fatalf("run %d step %d: a copy of the State asks\n%s\nthe State\n%s", run, step, got, want)
				}
			}
			in := input(next, pick(), step, now)
			now = now.Add(time.Second)
			if sent != nil {
				if again := mustJSON(t, next.Request); !bytes.Equal(again, sent) {
					t.Fatalf("run %d step %d: the request changed before its reply:\n%s\nwas\n%s", run, step, again, sent)
				}
			}
			if effects, err = l.Step(st, in); err != nil {
				t.Fatal(err)
			}
			if twinEffects, err = l.Step(twin, in); err != nil {
				t.Fatal(err)
			}
		}
		// The conversation keeps the prompt and the answer, or every
		// message, in place of the run's; the twin keeps the same in a
		// copy.
		kept := st.Messages[st.Start:]
		if b := pick(); b&1 == 0 {
			kept = []Message{st.Messages[st.Start], {Role: RoleAssistant, Content: st.Result.Output}}
		}
		kept = slices.Clone(kept)
		twinHistory = append(slices.Clone(twin.Messages[:twin.Start]), kept...)
		st.Messages = append(st.Messages[:st.Start], kept...)
		if b := pick(); b%7 == 0 {
			st.Messages = slices.Clone(st.Messages) // a conversation that moved to another array
		}
		prev = st
	}
}

// input is the answer to e, drawn from b.
func input(e *Effect, b byte, step int, now time.Time) Input {
	in := Input{Now: now}
	usage := Usage{PromptTokens: 20 + int(b)*3, CompletionTokens: 5 + int(b%13), TotalTokens: 25 + int(b)*3 + int(b%13)}
	switch e.Kind {
	case AskModel:
		msg := Message{Role: RoleAssistant, Content: strings.Repeat("thinking ", int(b%3)), ResponseID: fmt.Sprint("resp_", step)}
		names := []string{"read", "write", "charge", "nope"}
		switch n := int(b % 4); {
		case e.Summary:
			msg.Content = strings.Repeat("summary ", int(b%3))
		case b&0x80 == 0 && n > 0:
			for i := range n {
				msg.ToolCalls = append(msg.ToolCalls, ToolRequest{ID: fmt.Sprint("c", step, "_", i), Name: names[(int(b)+i)%len(names)], Arguments: `{"page":1}`})
			}
		default:
			msg.Content = `{"answer":"` + strings.Repeat("x", int(b%50)) + `"}`
		}
		in.Reply = &Response{Message: msg, Usage: usage}
		if b%17 == 0 {
			in.Reply.FinishReason = "length"
		}
	case RunCall:
		in.Done = &Done{CallID: e.Call.ID, Output: strings.Repeat("result ", 5+int(b)*2)}
		switch b % 9 {
		case 0:
			in.Done = &Done{CallID: e.Call.ID, Failure: ToolFailed, Error: "it broke"}
		case 1:
			in.Done.Images = []Image{png(int(b) + 1)}
		}
	case AskApproval:
		in.Approval = &Approval{CallID: e.Call.ID, Granted: b%2 == 0}
	case CheckAnswer:
		in.Checked = &Checked{}
		if b%3 != 0 {
			in.Checked.Problems = []string{"answer: missing"}
		}
	}
	return in
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
