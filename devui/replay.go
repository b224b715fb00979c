package devui

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/visible"
	"github.com/onionkit/onion/loop"
)

// This file reads a recording that oniontest.Record wrote (the format
// "oniontest/recording/1", see package oniontest) into the steps of a
// run, for the page to step through as if it ran: each exchange is a
// model request and its reply, the tool calls the reply asks for, and
// their outputs as the next request carried them back to the model.
// Nothing runs: no tool is called and no model is asked. A recording is
// input from outside: its size, its exchanges and every text are bounded.

// Bounds of a recording the page opens.
const (
	maxRecording    = 32 << 20
	maxExchanges    = 1000
	maxReplayJSON   = 256 << 10 // of one request's JSON or reply's body shown
	maxReplayCalls  = 128       // tool calls of one reply
	maxStreamEvents = 1 << 16   // events of one streamed reply
)

// replay is a recording as the page steps through it.
type replay struct {
	Name   string       `json:"name"`
	Prompt string       `json:"prompt"`
	Answer string       `json:"answer"`
	Steps  []replayStep `json:"steps"`
}

// replayStep is one exchange: a request and its reply.
type replayStep struct {
	Step         int            `json:"step"`
	Path         string         `json:"path"`
	Status       int            `json:"status"`
	Model        string         `json:"model"`
	Request      string         `json:"request"` // the request's JSON, as recorded
	Reply        string         `json:"reply"`   // the reply's body, as recorded
	Text         string         `json:"text"`
	FinishReason string         `json:"finish_reason,omitempty"`
	Usage        onion.Usage    `json:"usage"`
	ToolCalls    []replayCall   `json:"tool_calls"`
	Results      []replayResult `json:"results"` // outputs of the calls before, as this request carried them
	Error        string         `json:"error,omitempty"`
}

type replayCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type replayResult struct {
	CallID  string `json:"call_id"`
	Output  string `json:"output"`
	Outcome string `json:"outcome"` // as the text the model read says
}

// recordingFile is the part of a recording the page reads.
type recordingFile struct {
	Format    string `json:"format"`
	Exchanges []struct {
		Request struct {
			Method string          `json:"method"`
			Path   string          `json:"path"`
			JSON   json.RawMessage `json:"json"`
			Body   string          `json:"body"`
		} `json:"request"`
		Response struct {
			Status     int      `json:"status"`
			Events     []string `json:"events"`
			Body       string   `json:"body"`
			BodyBase64 []byte   `json:"body_base64"`
		} `json:"response"`
	} `json:"exchanges"`
}

// parseReplay reads the recording data, named name.
func (u *UI) parseReplay(name string, data []byte) (*replay, error) {
	var rec recordingFile
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("devui: recording %s: %w: give a file that oniontest.Record wrote", name, err)
	}
	if rec.Format != "oniontest/recording/1" {
		return nil, fmt.Errorf("devui: recording %s: format %q, want \"oniontest/recording/1\" (a file oniontest.Record wrote)", name, loop.Cap(rec.Format, 64))
	}
	if len(rec.Exchanges) > maxExchanges {
		return nil, fmt.Errorf("devui: recording %s: %d exchanges, more than the %d the page steps through", name, len(rec.Exchanges), maxExchanges)
	}
	rp := &replay{Name: u.showName(name, maxTitle), Steps: []replayStep{}}
	for i, ex := range rec.Exchanges {
		st := replayStep{Step: i + 1, Path: u.showName(ex.Request.Path, 256), Status: ex.Response.Status, ToolCalls: []replayCall{}, Results: []replayResult{}}
		req := ex.Request.JSON
		if len(req) == 0 {
			req = json.RawMessage(ex.Request.Body)
		}
		st.Request = u.show(string(req), maxReplayJSON)
		var body string
		switch {
		case len(ex.Response.Events) > 0:
			if len(ex.Response.Events) > maxStreamEvents {
				return nil, fmt.Errorf("devui: recording %s: exchange %d: %d events, more than %d", name, i+1, len(ex.Response.Events), maxStreamEvents)
			}
			body = strings.Join(ex.Response.Events, "")
		case len(ex.Response.BodyBase64) > 0:
			body = base64.StdEncoding.EncodeToString(ex.Response.BodyBase64)
		default:
			body = ex.Response.Body
		}
		st.Reply = u.show(body, maxReplayJSON)
		responses := strings.HasSuffix(ex.Request.Path, "/responses")
		var prompt string
		prompt, st.Results, st.Model = u.readRequest(req, responses)
		if rp.Prompt == "" {
			rp.Prompt = prompt
		}
		switch {
		case st.Status != 200:
			st.Error = fmt.Sprintf("status %d: %s", st.Status, u.show(body, maxShown))
		case len(ex.Response.Events) > 0:
			u.readReply(&st, streamBody(ex.Response.Events, responses), responses)
		default:
			u.readReply(&st, json.RawMessage(body), responses)
		}
		if st.Error == "" && len(st.ToolCalls) == 0 {
			rp.Answer = st.Text
		}
		rp.Steps = append(rp.Steps, st)
	}
	return rp, nil
}

// show is s as the page shows text from a recording: cut, and secrets
// replaced.
func (u *UI) show(s string, limit int) string {
	return u.scrub.text(loop.Cap(s, limit))
}

// showName is a name or an ID from a recording, or a call's arguments:
// with what a reader would not see escaped too.
func (u *UI) showName(s string, limit int) string {
	return u.show(visible.String(s), limit)
}

// wireMessage is a message or input item of either wire, as far as the
// page reads it.
type wireMessage struct {
	Role       string          `json:"role"`
	Type       string          `json:"type"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	CallID     string          `json:"call_id"`
	Output     json.RawMessage `json:"output"`
}

// readRequest finds in a request its prompt (the last user message),
// the tool outputs it carries back (those after the last assistant
// message or call) and its model.
func (u *UI) readRequest(req json.RawMessage, responses bool) (prompt string, results []replayResult, model string) {
	var r struct {
		Model    string          `json:"model"`
		Messages []wireMessage   `json:"messages"`
		Input    json.RawMessage `json:"input"`
	}
	results = []replayResult{}
	if json.Unmarshal(req, &r) != nil {
		return "", results, ""
	}
	msgs := r.Messages
	if responses {
		var s string
		if json.Unmarshal(r.Input, &s) == nil {
			msgs = []wireMessage{{Role: "user", Content: r.Input}}
		} else {
			_ = json.Unmarshal(r.Input, &msgs)
		}
	}
	for _, m := range msgs {
		switch {
		case m.Role == "user":
			prompt, results = textOf(m.Content), results[:0]
		case m.Role == "assistant" || m.Type == "function_call":
			results = results[:0]
		case m.Role == "tool" || m.Type == "function_call_output":
			if len(results) >= maxReplayCalls {
				continue
			}
			out := textOf(m.Content)
			id := m.ToolCallID
			if m.Type == "function_call_output" {
				out, id = textOf(m.Output), m.CallID
			}
			results = append(results, replayResult{CallID: u.showName(id, 256), Output: u.show(out, maxShown), Outcome: outcomeOf(out)})
		}
	}
	return u.show(prompt, maxShown), results, u.showName(r.Model, 256)
}

// textOf is the text of a message's content: a string, or the text of
// its parts.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// outcomeOf tells how a call ended from the text the model read of it.
func outcomeOf(out string) string {
	switch {
	case out == loop.DeniedText:
		return string(onion.Denied)
	case strings.HasPrefix(out, loop.SkippedPrefix):
		return string(onion.Skipped)
	case strings.HasPrefix(out, "outcome unknown:"):
		return string(onion.OutcomeUnknown)
	case strings.HasPrefix(out, "error: "):
		return string(onion.Failed)
	}
	return string(onion.Succeeded)
}

// wireReply is a reply of either wire, whole, as far as the page reads
// it.
type wireReply struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   json.RawMessage `json:"content"`
			ToolCalls []wireCall      `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Output []struct {
		Type      string          `json:"type"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
	} `json:"output"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *wireUsage `json:"usage"`
}

type wireCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

func (w *wireUsage) usage() onion.Usage {
	if w == nil {
		return onion.Usage{}
	}
	u := onion.Usage{PromptTokens: w.PromptTokens + w.InputTokens, CompletionTokens: w.CompletionTokens + w.OutputTokens}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if d := w.PromptTokensDetails; d != nil {
		u.CachedTokens = d.CachedTokens
	}
	if d := w.InputTokensDetails; d != nil {
		u.CachedTokens = d.CachedTokens
	}
	return u
}

// readReply reads a whole reply of either wire into st.
func (u *UI) readReply(st *replayStep, body json.RawMessage, responses bool) {
	var w wireReply
	if err := json.Unmarshal(body, &w); err != nil {
		st.Error = "the reply is not one the page reads: " + u.show(err.Error(), 256)
		return
	}
	if m := u.showName(w.Model, 256); m != "" {
		st.Model = m
	}
	st.Usage = w.Usage.usage()
	var text strings.Builder
	var calls []replayCall
	if responses {
		for _, o := range w.Output {
			switch o.Type {
			case "message":
				text.WriteString(textOf(o.Content))
			case "function_call":
				calls = append(calls, replayCall{ID: o.CallID, Name: o.Name, Arguments: o.Arguments})
			}
		}
		st.FinishReason = w.Status
		if w.IncompleteDetails != nil {
			st.FinishReason = w.IncompleteDetails.Reason
		}
	} else if len(w.Choices) > 0 {
		c := w.Choices[0]
		text.WriteString(textOf(c.Message.Content))
		for _, tc := range c.Message.ToolCalls {
			calls = append(calls, replayCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		st.FinishReason = c.FinishReason
	}
	st.Text = u.show(text.String(), maxReplyText)
	st.FinishReason = u.showName(st.FinishReason, 64)
	for _, c := range calls[:min(len(calls), maxReplayCalls)] {
		st.ToolCalls = append(st.ToolCalls, replayCall{ID: u.showName(c.ID, 256), Name: u.showName(c.Name, 256), Arguments: u.showName(c.Arguments, maxShown)})
	}
}

// streamBody assembles a streamed reply into the whole reply it stands
// for: on the Responses API the response its last response.completed
// (or .incomplete) event carries, on Chat Completions the chunks' text
// and call fragments joined.
func streamBody(events []string, responses bool) json.RawMessage {
	var datas [][]byte
	for _, e := range events {
		for line := range strings.SplitSeq(e, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				datas = append(datas, bytes.TrimSpace([]byte(d)))
			}
		}
	}
	if responses {
		for _, d := range slices.Backward(datas) {
			var ev struct {
				Type     string          `json:"type"`
				Response json.RawMessage `json:"response"`
			}
			if json.Unmarshal(d, &ev) == nil && (ev.Type == "response.completed" || ev.Type == "response.incomplete") {
				return ev.Response
			}
		}
		return json.RawMessage(`{}`)
	}
	var text strings.Builder
	var calls []wireCall
	var model, finish string
	var usage *wireUsage
	for _, d := range datas {
		var chunk struct {
			Model   string `json:"model"`
			Choices []struct {
				Delta struct {
					Content   string     `json:"content"`
					ToolCalls []wireCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage *wireUsage `json:"usage"`
		}
		if json.Unmarshal(d, &chunk) != nil {
			continue // [DONE], or what the page cannot read
		}
		model = cmp.Or(chunk.Model, model)
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, c := range chunk.Choices {
			if text.Len() < maxReplyText {
				text.WriteString(c.Delta.Content)
			}
			finish = cmp.Or(c.FinishReason, finish)
			for _, tc := range c.Delta.ToolCalls {
				calls = joinCall(calls, tc)
			}
		}
	}
	whole := map[string]any{"model": model, "usage": usage, "choices": []any{map[string]any{
		"finish_reason": finish, "message": map[string]any{"content": text.String(), "tool_calls": calls}}}}
	b, _ := json.Marshal(whole)
	return b
}

// joinCall adds the fragment tc of a streamed call to calls: to the call
// of its index, or with no index to the last one unless it starts a new
// call (it has an ID).
func joinCall(calls []wireCall, tc wireCall) []wireCall {
	i := -1
	switch {
	case tc.Index != nil:
		i = slices.IndexFunc(calls, func(c wireCall) bool { return c.Index != nil && *c.Index == *tc.Index })
	case tc.ID == "" && len(calls) > 0:
		i = len(calls) - 1
	}
	if i < 0 {
		if len(calls) >= maxReplayCalls {
			return calls
		}
		return append(calls, tc)
	}
	c := &calls[i]
	c.ID = cmp.Or(c.ID, tc.ID)
	c.Function.Name = cmp.Or(c.Function.Name, tc.Function.Name)
	if len(c.Function.Arguments) < maxShown {
		c.Function.Arguments += tc.Function.Arguments
	}
	return calls
}

// errRecordingTooBig is a recording past maxRecording.
var errRecordingTooBig = errors.New("devui: the recording is over 32 MiB, more than the page opens")
