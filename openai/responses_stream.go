package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// This file is the Responses API's stream: the events the wire reads, and
// the assembly of a response from them, in time linear in their size.

// streamEvent is what the wire reads of one Responses stream event.
type streamEvent struct {
	Type        string          `json:"type"`
	OutputIndex *int            `json:"output_index"`
	ItemID      string          `json:"item_id"`
	Delta       string          `json:"delta"`
	Arguments   *string         `json:"arguments"`
	Item        json.RawMessage `json:"item"`
	Response    *streamResponse `json:"response"`
	// The error event carries its fields at the top level or, as
	// api.openai.com sent it in 2025, in an error object.
	Code    any          `json:"code"`
	Message string       `json:"message"`
	Error   *streamError `json:"error"`
}

type streamResponse struct {
	ID                string                              `json:"id"`
	Model             string                              `json:"model"`
	Status            string                              `json:"status"`
	Output            []json.RawMessage                   `json:"output"`
	Error             *streamError                        `json:"error"`
	IncompleteDetails *goopenai.ResponseIncompleteDetails `json:"incomplete_details"`
	Usage             *goopenai.ResponseUsage             `json:"usage"`
}

// streamError is an error inside a stream, whose code may be a string, a
// number or null.
type streamError struct {
	Type    string `json:"type"`
	Code    any    `json:"code"`
	Message string `json:"message"`
}

// streamItem is one output item being streamed.
type streamItem struct {
	pos  int             // position in responseAssembler.items
	raw  json.RawMessage // the latest whole item: from output_item.added, then .done
	done bool            // raw is from output_item.done
	args strings.Builder // argument deltas, for a call whose done event never came
}

// responseAssembler builds a response from its stream events, in time
// linear in their size.
type responseAssembler struct {
	items   []*streamItem  // in the order they began
	index   map[int]int    // output_index → position in items
	byID    map[string]int // item id → position, for events without an index
	text    strings.Builder
	final   *streamResponse // the response of response.completed or .incomplete
	id      string
	model   string
	onDelta func(loop.Delta)
}

// item returns the item an event is about, adding it when it is new. An
// event with neither a known index nor a known item id is about the last
// item.
func (a *responseAssembler) item(ev *streamEvent) *streamItem {
	if ev.OutputIndex != nil {
		if p, ok := a.index[*ev.OutputIndex]; ok {
			return a.items[p]
		}
	} else if p, ok := a.byID[ev.ItemID]; ok {
		return a.items[p]
	} else if len(a.items) > 0 {
		return a.items[len(a.items)-1]
	}
	if ev.OutputIndex != nil {
		if a.index == nil {
			a.index = map[int]int{}
		}
		a.index[*ev.OutputIndex] = len(a.items)
	}
	it := &streamItem{pos: len(a.items)}
	a.items = append(a.items, it)
	return it
}

// handledEvents are the event types add reads.
var handledEvents = map[string]bool{
	"response.created": true, "response.in_progress": true,
	"response.output_item.added": true, "response.output_item.done": true,
	"response.output_text.delta": true, "response.refusal.delta": true, "response.reasoning_text.delta": true, "response.reasoning_summary_text.delta": true,
	"response.function_call_arguments.delta": true, "response.function_call_arguments.done": true,
	"response.completed": true, "response.incomplete": true, "response.failed": true, "error": true,
}

// add takes one event. It returns the error the event reports, if any,
// and whether the response is complete.
func (a *responseAssembler) add(ev *streamEvent) (bool, error) {
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response != nil {
			a.id, a.model = ev.Response.ID, ev.Response.Model
		}
	case "response.output_item.added", "response.output_item.done":
		it := a.item(ev)
		if len(ev.Item) > 0 {
			it.raw, it.done = ev.Item, ev.Type == "response.output_item.done"
			var h struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(ev.Item, &h) == nil && h.ID != "" {
				if a.byID == nil {
					a.byID = map[string]int{}
				}
				a.byID[h.ID] = it.pos
			}
		}
	case "response.output_text.delta":
		a.text.WriteString(ev.Delta)
		if ev.Delta != "" {
			a.onDelta(loop.Delta{Text: ev.Delta})
		}
	case "response.refusal.delta":
		// Shown as it comes, as text; the refusal part of the items
		// marks the reply refused.
		if ev.Delta != "" {
			a.onDelta(loop.Delta{Text: ev.Delta})
		}
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		if ev.Delta != "" {
			a.onDelta(loop.Delta{Reasoning: ev.Delta})
		}
	case "response.function_call_arguments.delta":
		a.item(ev).args.WriteString(ev.Delta)
	case "response.function_call_arguments.done":
		if ev.Arguments != nil {
			it := a.item(ev)
			it.args.Reset()
			it.args.WriteString(*ev.Arguments)
		}
	case "response.completed", "response.incomplete":
		a.final = ev.Response
		return true, nil
	case "response.failed":
		var e *streamError
		if ev.Response != nil {
			e = ev.Response.Error
		}
		return false, failedError(e)
	case "error":
		e := &goopenai.APIError{Code: ev.Code, Message: ev.Message}
		if ev.Error != nil {
			e = &goopenai.APIError{Code: ev.Error.Code, Message: ev.Error.Message, Type: ev.Error.Type}
		}
		return false, fmt.Errorf("the model endpoint reported an error mid-stream: %w", e)
	}
	return false, nil
}

// allDone reports whether the stream began items and finished each.
func (a *responseAssembler) allDone() bool {
	for _, it := range a.items {
		if !it.done {
			return false
		}
	}
	return len(a.items) > 0
}

// response is the assembled response. The output of response.completed
// wins, as the last word on every item (encrypted reasoning differs
// between the events); without it, the items as the stream left them.
func (a *responseAssembler) response() (*loop.Response, error) {
	resp := &loop.Response{ID: a.id, Model: a.model}
	var items []json.RawMessage
	var status, incomplete string
	if f := a.final; f != nil {
		items, status = f.Output, f.Status
		resp.Usage = fromResponsesUsage(f.Usage)
		if f.ID != "" {
			resp.ID = f.ID
		}
		if f.Model != "" {
			resp.Model = f.Model
		}
		if f.IncompleteDetails != nil {
			incomplete = f.IncompleteDetails.Reason
		}
	}
	if len(items) == 0 {
		for _, it := range a.items {
			raw, err := it.whole()
			if err != nil {
				return nil, err
			}
			if raw != nil {
				items = append(items, raw)
			}
		}
	}
	msg, refusal, err := responseMessage(items)
	if err != nil {
		return nil, err
	}
	if msg.Content == "" {
		msg.Content = a.text.String() // a server whose items left the text out
	}
	msg.ResponseID = resp.ID
	resp.Message = msg
	resp.FinishReason = finishReason(msg, status, incomplete)
	refused(resp, refusal, "")
	return resp, nil
}

// whole is the item as the stream left it: as output_item.done gave it,
// else as output_item.added did with the streamed arguments of a call.
func (it *streamItem) whole() (json.RawMessage, error) {
	if it.done || it.raw == nil {
		return it.raw, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(it.raw, &fields); err != nil {
		return nil, fmt.Errorf("output item: %w", err)
	}
	if it.args.Len() > 0 {
		args, _ := json.Marshal(it.args.String())
		fields["arguments"] = args
	}
	return json.Marshal(fields)
}

func (m *responsesModel) stream(ctx context.Context, req goopenai.CreateResponseRequest, onDelta func(loop.Delta), hint *retryHint) (*loop.Response, error) {
	hint.stream = true
	stream, err := m.client.CreateResponseStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	events := hint.events(stream, m.emptyLimit)
	a := responseAssembler{onDelta: onDelta}
	var dec eventDecoder
	for {
		raw, err := events.RecvRaw()
		if errors.Is(err, io.EOF) {
			// The body ended without response.completed: the reply is
			// whole only if every item it began was done.
			if a.allDone() {
				return a.response()
			}
			return nil, fmt.Errorf("the model endpoint's stream ended before the response completed: %w", io.ErrUnexpectedEOF)
		}
		if err == nil && len(raw) == 0 {
			err = errors.New("the stream ended with an error event") // one go-openai could not decode
		}
		if err != nil {
			if se := hint.streamError(); se != nil {
				return nil, fmt.Errorf("the model endpoint reported an error mid-stream: %w", se)
			}
			return nil, err
		}
		ev, err := dec.decode(raw)
		if err != nil {
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(raw, &head) == nil && !handledEvents[head.Type] {
				continue // an event of a kind the wire does not read, in a shape it does not know
			}
			return nil, fmt.Errorf("the model endpoint sent an event the wire cannot read: %w", err)
		}
		complete, err := a.add(ev)
		if err != nil {
			return nil, err
		}
		if complete {
			return a.response()
		}
	}
}

// eventDecoder decodes stream events as encoding/json decodes them into a
// streamEvent. The events of every delta, which carry a type, an item's
// index and id, and the delta, are read by scanner into one streamEvent
// reused from event to event, their type and item id made strings once;
// any other event (an item, a response, an error) goes to encoding/json.
type eventDecoder struct {
	ev    streamEvent
	index int // what ev.OutputIndex points to
	scan  scanner
	// names are the types and item ids seen lately, as strings.
	names [8]string
	next  int
}

// decode decodes data, valid until the next call.
func (d *eventDecoder) decode(data []byte) (*streamEvent, error) {
	if d.read(data) {
		return &d.ev, nil
	}
	ev := new(streamEvent)
	if err := json.Unmarshal(data, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// eventNames are the names of a streamEvent's members.
var eventNames = []string{"type", "output_index", "item_id", "delta", "arguments", "item", "response", "code", "message", "error"}

// The members of an event the scanner reads, as bits.
const (
	evType = 1 << iota
	evOutputIndex
	evItemID
	evDelta
)

// read reads data into d.ev by scanner; false if it gave up.
func (d *eventDecoder) read(data []byte) bool {
	s := &d.scan
	s.reset(data)
	d.ev = streamEvent{}
	if !s.object() {
		return false
	}
	var seen uint32
	for first := true; ; first = false {
		name, special, ok := s.member(first)
		if !ok {
			break
		}
		switch string(name) {
		case "type":
			s.once(&seen, evType)
			t, _ := s.text()
			d.ev.Type = d.intern(t)
		case "output_index":
			s.once(&seen, evOutputIndex)
			if v, isNull := s.integer(); !isNull {
				d.index = v
				d.ev.OutputIndex = &d.index
			}
		case "item_id":
			s.once(&seen, evItemID)
			t, _ := s.text()
			d.ev.ItemID = d.intern(t)
		case "delta":
			s.once(&seen, evDelta)
			t, _ := s.text()
			d.ev.Delta = t.String()
		case "arguments", "item", "response", "code", "message", "error":
			s.fail()
		default:
			s.other(name, special, eventNames)
		}
	}
	return s.end()
}

// intern returns t as a string, the same string as before when t was
// seen lately.
func (d *eventDecoder) intern(t jsonText) string {
	if t.isEmpty() {
		return ""
	}
	if !t.esc {
		for _, n := range d.names {
			if string(t.raw) == n {
				return n
			}
		}
	}
	n := t.String()
	d.names[d.next] = n
	d.next = (d.next + 1) % len(d.names)
	return n
}
