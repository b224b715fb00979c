package oniontest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// The structs below mirror the Responses API as api.openai.com sent it in
// 2026 (see testdata/fixtures/responses): the same keys in the same order,
// the nulls included, and a sequence_number on every event. They are kept
// apart from go-openai's types, which leave out the nulls and the empty
// lists.

// incompleteDetails says why a response is incomplete.
type incompleteDetails struct {
	Reason string `json:"reason"`
}

type response struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"`
	Background         bool               `json:"background"`
	CompletedAt        *int64             `json:"completed_at"`
	Error              *responseError     `json:"error"`
	IncompleteDetails  *incompleteDetails `json:"incomplete_details"`
	Instructions       *string            `json:"instructions"`
	MaxOutputTokens    *int               `json:"max_output_tokens"`
	MaxToolCalls       *int               `json:"max_tool_calls"`
	Model              string             `json:"model"`
	Output             []json.RawMessage  `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID *string            `json:"previous_response_id"`
	Reasoning          reasoningConfig    `json:"reasoning"`
	Store              bool               `json:"store"`
	Temperature        float32            `json:"temperature"`
	Text               textConfig         `json:"text"`
	ToolChoice         any                `json:"tool_choice"`
	Tools              []json.RawMessage  `json:"tools"`
	TopP               float32            `json:"top_p"`
	Truncation         string             `json:"truncation"`
	Usage              *responseUsage     `json:"usage"` // null until the response is complete
	User               *string            `json:"user"`
	Metadata           struct{}           `json:"metadata"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type reasoningConfig struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

type textConfig struct {
	Format struct {
		Type string `json:"type"`
	} `json:"format"`
	Verbosity string `json:"verbosity"`
}

type responseUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type messageItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Status  string       `json:"status"`
	Content []outputText `json:"content"`
	Role    string       `json:"role"`
}

type outputText struct {
	Type        string     `json:"type"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
	Text        string     `json:"text"`
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// The stream's events, one struct per shape.

type responseEvent struct {
	Type     string   `json:"type"`
	Response response `json:"response"`
	Seq      int      `json:"sequence_number"`
}

type itemEvent struct {
	Type        string `json:"type"`
	Item        any    `json:"item"`
	OutputIndex int    `json:"output_index"`
	Seq         int    `json:"sequence_number"`
}

type partEvent struct {
	Type         string     `json:"type"`
	ContentIndex int        `json:"content_index"`
	ItemID       string     `json:"item_id"`
	OutputIndex  int        `json:"output_index"`
	Part         outputText `json:"part"`
	Seq          int        `json:"sequence_number"`
}

type textDeltaEvent struct {
	Type         string     `json:"type"`
	ContentIndex int        `json:"content_index"`
	Delta        string     `json:"delta"`
	ItemID       string     `json:"item_id"`
	Logprobs     []struct{} `json:"logprobs"`
	OutputIndex  int        `json:"output_index"`
	Seq          int        `json:"sequence_number"`
}

type textDoneEvent struct {
	Type         string     `json:"type"`
	ContentIndex int        `json:"content_index"`
	ItemID       string     `json:"item_id"`
	Logprobs     []struct{} `json:"logprobs"`
	OutputIndex  int        `json:"output_index"`
	Seq          int        `json:"sequence_number"`
	Text         string     `json:"text"`
}

type argumentsDeltaEvent struct {
	Type        string `json:"type"`
	Delta       string `json:"delta"`
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
	Seq         int    `json:"sequence_number"`
}

type argumentsDoneEvent struct {
	Type        string `json:"type"`
	Arguments   string `json:"arguments"`
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
	Seq         int    `json:"sequence_number"`
}

// errorEvent is the error event of a failing stream, as OpenAI sent it
// before response.failed.
type errorEvent struct {
	Type  string `json:"type"`
	Seq   int    `json:"sequence_number"`
	Error struct {
		Type    string  `json:"type"`
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Param   *string `json:"param"`
	} `json:"error"`
}

// streamEvent is one of the event structs above; its type names the
// event in the stream's "event:" line.
type streamEvent interface{ eventType() string }

func (e responseEvent) eventType() string       { return e.Type }
func (e itemEvent) eventType() string           { return e.Type }
func (e partEvent) eventType() string           { return e.Type }
func (e textDeltaEvent) eventType() string      { return e.Type }
func (e textDoneEvent) eventType() string       { return e.Type }
func (e argumentsDeltaEvent) eventType() string { return e.Type }
func (e argumentsDoneEvent) eventType() string  { return e.Type }
func (e errorEvent) eventType() string          { return e.Type }

// responsesReply encodes a Text, ToolCalls or StreamError step as the
// reply to Responses request number n.
func responsesReply(n int, req Request, step Step) reply {
	rr := req.Responses
	id := "resp_oniontest_" + strconv.Itoa(n)
	resp := response{
		ID: id, Object: "response", CreatedAt: time.Now().Unix(), Status: "in_progress",
		Model: rr.Model, Output: []json.RawMessage{}, ParallelToolCalls: true,
		Store: rr.Store == nil || *rr.Store, Temperature: 1, ToolChoice: rr.ToolChoice,
		Tools: rr.Tools, TopP: 1, Truncation: "disabled",
	}
	if resp.Model == "" {
		resp.Model = "oniontest"
	}
	if rr.Instructions != "" {
		resp.Instructions = &rr.Instructions
	}
	if rr.PreviousResponseID != "" {
		resp.PreviousResponseID = &rr.PreviousResponseID
	}
	if rr.Temperature != nil {
		resp.Temperature = *rr.Temperature
	}
	if resp.ToolChoice == nil {
		resp.ToolChoice = "auto"
	}
	if resp.Tools == nil {
		resp.Tools = []json.RawMessage{}
	}
	resp.Text.Format.Type, resp.Text.Verbosity = "text", "medium"
	u := defaultUsage
	if step.usage != nil {
		u = *step.usage
	}
	var usage responseUsage
	usage.InputTokens, usage.OutputTokens, usage.TotalTokens = u.PromptTokens, u.CompletionTokens, u.TotalTokens

	if step.kind == stepStreamError && !req.Stream {
		return streamErrorReply(meta{}, false, step)
	}
	e := responsesEncoder{stream: req.Stream}
	e.event(responseEvent{Seq: e.seq(), Type: "response.created", Response: resp})
	e.event(responseEvent{Seq: e.seq(), Type: "response.in_progress", Response: resp})
	switch step.kind {
	case stepStreamError:
		ev := errorEvent{Type: "error", Seq: e.seq()}
		ev.Error.Type, ev.Error.Code, ev.Error.Message = step.code, step.code, step.text
		e.event(ev)
		resp.Status = "failed"
		resp.Error = &responseError{Code: step.code, Message: step.text}
		e.event(responseEvent{Seq: e.seq(), Type: "response.failed", Response: resp})
		return e.reply()
	case stepToolCalls:
		for i, c := range step.calls {
			item := functionCallItem{ID: "fc_oniontest_" + strconv.Itoa(n) + "_" + strconv.Itoa(i),
				Type: "function_call", Status: "in_progress", CallID: c.ID, Name: c.Name}
			e.event(itemEvent{Seq: e.seq(), Type: "response.output_item.added", Item: item, OutputIndex: i})
			if !step.whole {
				// Whole: no deltas at all, only the done event, as LM Studio streams calls.
				for _, frag := range split(c.Arguments, argumentFragment) {
					e.event(argumentsDeltaEvent{Seq: e.seq(), Type: "response.function_call_arguments.delta", Delta: frag, ItemID: item.ID, OutputIndex: i})
				}
			}
			e.event(argumentsDoneEvent{Seq: e.seq(), Type: "response.function_call_arguments.done", Arguments: c.Arguments, ItemID: item.ID, OutputIndex: i})
			item.Status, item.Arguments = "completed", c.Arguments
			e.event(itemEvent{Seq: e.seq(), Type: "response.output_item.done", Item: item, OutputIndex: i})
			resp.Output = append(resp.Output, marshal(item))
		}
	default:
		item := messageItem{ID: "msg_oniontest_" + strconv.Itoa(n), Type: "message", Status: "in_progress",
			Content: []outputText{}, Role: "assistant"}
		part := outputText{Type: "output_text", Annotations: []struct{}{}, Logprobs: []struct{}{}}
		e.event(itemEvent{Seq: e.seq(), Type: "response.output_item.added", Item: item})
		e.event(partEvent{Seq: e.seq(), Type: "response.content_part.added", ItemID: item.ID, Part: part})
		for _, w := range words(step.text) {
			e.event(textDeltaEvent{Seq: e.seq(), Type: "response.output_text.delta", Delta: w, ItemID: item.ID, Logprobs: []struct{}{}})
		}
		e.event(textDoneEvent{Seq: e.seq(), Type: "response.output_text.done", ItemID: item.ID, Logprobs: []struct{}{}, Text: step.text})
		part.Text = step.text
		e.event(partEvent{Seq: e.seq(), Type: "response.content_part.done", ItemID: item.ID, Part: part})
		item.Status, item.Content = "completed", []outputText{part}
		e.event(itemEvent{Seq: e.seq(), Type: "response.output_item.done", Item: item})
		resp.Output = append(resp.Output, marshal(item))
	}
	final := "response.completed"
	resp.Status = "completed"
	done := resp.CreatedAt
	resp.CompletedAt, resp.Usage = &done, &usage
	if step.truncated || step.refused {
		reason := "max_output_tokens"
		if step.refused {
			reason = "content_filter"
		}
		resp.Status, final = "incomplete", "response.incomplete"
		resp.IncompleteDetails = &incompleteDetails{Reason: reason}
		resp.CompletedAt = nil
	}
	if !req.Stream {
		return reply{
			status: http.StatusOK,
			header: http.Header{"Content-Type": {"application/json"}},
			pieces: [][]byte{append(marshal(resp), '\n')},
		}
	}
	e.event(responseEvent{Seq: e.seq(), Type: final, Response: resp})
	return e.reply()
}

// responsesEncoder collects the SSE events of one streamed response,
// numbering them.
type responsesEncoder struct {
	stream bool // false: events are not kept, only the final response is sent
	events [][]byte
}

// seq is the sequence number of the next event.
func (e *responsesEncoder) seq() int { return len(e.events) }

// event appends ev, framed as OpenAI frames it: "event: <type>", then its
// data.
func (e *responsesEncoder) event(ev streamEvent) {
	if !e.stream {
		return
	}
	e.events = append(e.events, append([]byte("event: "+ev.eventType()+"\n"), sse(marshal(ev))...))
}

func (e *responsesEncoder) reply() reply {
	return reply{
		status: http.StatusOK,
		header: http.Header{"Content-Type": {"text/event-stream"}},
		pieces: e.events,
	}
}
