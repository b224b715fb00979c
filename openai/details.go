package openai

import (
	"bytes"
	"encoding/json"
	"slices"
)

// This file is OpenRouter's reasoning_details on Chat Completions: the
// structured reasoning of a reply (its text with the signature Anthropic
// checks, an OpenAI model's encrypted reasoning, a Gemini thought
// signature), which OpenRouter asks to get back on the assistant message
// so that the model can go on from it across tool calls. A whole reply
// has it as an array; a stream sends pieces of its entries, by index, to
// be put together.

// maxDetailsBytes bounds the reasoning_details of one reply, kept and sent
// back: more are dropped (the reasoning text stays).
const maxDetailsBytes = 8 << 20

// maxDetails bounds the entries of a streamed reasoning_details, and an
// entry's index.
const maxDetails = 64

// detailsOK reports whether x is a reasoning_details to keep: a non-empty
// JSON array of objects within maxDetailsBytes. It allocates nothing: a
// request checks the details of every message of its history.
func detailsOK(x []byte) bool {
	x = bytes.TrimSpace(x)
	if len(x) < 4 || len(x) > maxDetailsBytes || x[0] != '[' || !json.Valid(x) {
		return false
	}
	var s scanner
	s.reset(x)
	s.array()
	n := 0
	for first := true; s.elem(first); first = false {
		if s.peek() != '{' {
			return false
		}
		s.skip()
		n++
	}
	if s.failed {
		// Nested deeper than the scanner follows: as encoding/json
		// reads it.
		var elems []json.RawMessage
		if json.Unmarshal(x, &elems) != nil || len(elems) == 0 {
			return false
		}
		for _, e := range elems {
			if e[0] != '{' {
				return false
			}
		}
		return true
	}
	return n > 0
}

// detailsAssembler puts a streamed reasoning_details together: the pieces
// of one entry share its index; their text, summary, data and signature
// are joined in order, and every other member keeps its first value.
type detailsAssembler struct {
	entries []detailEntry
	size    int
	broken  bool // over the bounds, or not the shape above: none is kept
}

// detailEntry is one entry of the array being put together.
type detailEntry struct {
	index   int // maxDetails and up, in order of arrival, when its pieces came without one
	members []detailMember
}

// detailMember is one member of an entry, in the order it first came.
type detailMember struct {
	name string
	raw  json.RawMessage // its value, for a member that is not joined
	text []byte          // the joined text, for one that is
	join bool
}

// joined reports whether the strings of member name are joined from piece
// to piece.
func joined(name string) bool {
	switch name {
	case "text", "summary", "data", "signature":
		return true
	}
	return false
}

// add takes the reasoning_details of one chunk.
func (d *detailsAssembler) add(raw []byte) {
	raw = bytes.TrimSpace(raw)
	if d.broken || len(raw) == 0 || string(raw) == "[]" || string(raw) == "null" {
		return
	}
	d.size += len(raw)
	var pieces []json.RawMessage
	if d.size > maxDetailsBytes || json.Unmarshal(raw, &pieces) != nil {
		d.fail()
		return
	}
	for _, p := range pieces {
		if !d.addPiece(p) {
			d.fail()
			return
		}
	}
}

func (d *detailsAssembler) fail() { d.broken, d.entries = true, nil }

// addPiece merges one piece, an object, into its entry; false when it is
// not one or its index is out of bounds.
func (d *detailsAssembler) addPiece(p json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(p))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	var names []string
	var values []json.RawMessage
	index := -1
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return false
		}
		if name == "index" {
			var n int
			if json.Unmarshal(v, &n) != nil || n < 0 || n >= maxDetails {
				return false
			}
			index = n
		}
		names, values = append(names, name), append(values, v)
	}
	e := d.entry(index)
	if e == nil {
		return false
	}
	for i, name := range names {
		e.merge(name, values[i])
	}
	return true
}

// entry is the entry of index, made when new; nil past maxDetails.
func (d *detailsAssembler) entry(index int) *detailEntry {
	if index >= 0 {
		for i := range d.entries {
			if d.entries[i].index == index {
				return &d.entries[i]
			}
		}
	}
	if len(d.entries) >= maxDetails {
		return nil
	}
	if index < 0 {
		// After every indexed entry, in the order it came.
		index = maxDetails + len(d.entries)
	}
	d.entries = append(d.entries, detailEntry{index: index})
	return &d.entries[len(d.entries)-1]
}

// merge adds the value v of member name to e.
func (e *detailEntry) merge(name string, v json.RawMessage) {
	var s string
	isString := joined(name) && json.Unmarshal(v, &s) == nil && len(v) > 0 && v[0] == '"'
	for i := range e.members {
		m := &e.members[i]
		if m.name != name {
			continue
		}
		switch {
		case m.join && isString:
			m.text = append(m.text, s...)
		case !m.join && string(m.raw) == "null":
			m.raw = slices.Clone(v)
		}
		return
	}
	if isString {
		e.members = append(e.members, detailMember{name: name, text: []byte(s), join: true})
	} else {
		e.members = append(e.members, detailMember{name: name, raw: slices.Clone(v)})
	}
}

// result is the reasoning_details put together, its entries by index;
// nil when none came or they could not be kept.
func (d *detailsAssembler) result() json.RawMessage {
	if d.broken || len(d.entries) == 0 {
		return nil
	}
	slices.SortFunc(d.entries, func(a, b detailEntry) int { return a.index - b.index })
	b := []byte{'['}
	for i, e := range d.entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, m := range e.members {
			if j > 0 {
				b = append(b, ',')
			}
			name, _ := json.Marshal(m.name)
			b = append(append(b, name...), ':')
			if m.join {
				text, _ := json.Marshal(string(m.text))
				b = append(b, text...)
			} else {
				b = append(b, m.raw...)
			}
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if len(b) > maxDetailsBytes {
		return nil
	}
	return b
}
