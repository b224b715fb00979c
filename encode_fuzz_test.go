package onion

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// The types the fuzzer builds values of: every tag option and every way a
// type can marshal itself that encoding/json treats apart.

type fuzzRecord struct {
	fuzzEmbedded
	*fuzzPointed
	S      string              `json:"s"`
	Empty  string              `json:"empty,omitempty"`
	Zero   int                 `json:"zero,omitzero"`
	Quoted int64               `json:"quoted,string"`
	QStr   string              `json:"qstr,string"`
	F      float64             `json:"f"`
	F32    float32             `json:"f32"`
	U      uint16              `json:"u"`
	B      bool                `json:"b,omitempty"`
	P      *fuzzRecord         `json:"p,omitempty"`
	Any    any                 `json:"any"`
	List   []any               `json:"list"`
	Map    map[string]any      `json:"map,omitempty"`
	When   time.Time           `json:"when,omitzero"`
	Dur    time.Duration       `json:"dur"`
	Ptr    fuzzPtrMarshaler    `json:"ptr"`
	Val    fuzzValMarshaler    `json:"val"`
	Text   fuzzText            `json:"text"`
	Keys   map[fuzzText]int    `json:"keys,omitempty"`
	Ints   map[int8]string     `json:"ints,omitempty"`
	Bytes  []byte              `json:"bytes"`
	Raw    json.RawMessage     `json:"raw,omitempty"`
	Num    json.Number         `json:"num,omitempty"`
	Arr    [2]fuzzPtrMarshaler `json:"arr"`
	Skip   string              `json:"-"`
	NoTag  string
	hidden string
}

type fuzzEmbedded struct {
	E string         `json:"e"`
	S string         `json:"s"` // hidden by fuzzRecord.S
	M map[string]any `json:"m,omitempty"`
}

type fuzzPointed struct {
	Q int `json:"q"`
}

// fuzzPtrMarshaler marshals itself only when addressable.
type fuzzPtrMarshaler struct{ S string }

func (p *fuzzPtrMarshaler) MarshalJSON() ([]byte, error) { return json.Marshal("ptr:" + p.S) }

// fuzzValMarshaler writes its text as JSON, valid or not.
type fuzzValMarshaler struct{ JSON string }

func (v fuzzValMarshaler) MarshalJSON() ([]byte, error) {
	if v.JSON == "" {
		return []byte("null"), nil
	}
	return []byte(v.JSON), nil
}

// fuzzText writes itself as text, and fails on "fail".
type fuzzText string

func (t fuzzText) MarshalText() ([]byte, error) {
	if t == "fail" {
		return nil, errors.New("text failed")
	}
	return []byte("t:" + t), nil
}

// fuzzValues builds Go values from fuzz input: choices drives the shape,
// s, f and i fill the leaves.
type fuzzValues struct {
	choices []byte
	s       string
	f       float64
	i       int64
}

func (g *fuzzValues) next() byte {
	if len(g.choices) == 0 {
		return 0
	}
	c := g.choices[0]
	g.choices = g.choices[1:]
	return c
}

// piece is a part of s chosen by the next choice, so that keys differ.
func (g *fuzzValues) piece() string {
	if g.s == "" {
		return ""
	}
	n := int(g.next()) % (len(g.s) + 1)
	return g.s[:n]
}

func (g *fuzzValues) value(depth int) any {
	c := g.next()
	if depth > 4 {
		c %= 8 // leaves only
	}
	switch c % 24 {
	case 0:
		return nil
	case 1:
		return g.piece()
	case 2:
		return g.f
	case 3:
		return g.i
	case 4:
		return uint64(g.i)
	case 5:
		return float32(g.f)
	case 6:
		return g.next()%2 == 0
	case 7:
		return json.Number(g.piece())
	case 8:
		return []byte(g.piece())
	case 9:
		return json.RawMessage(g.piece())
	case 10:
		list := make([]any, int(g.next())%4)
		for i := range list {
			list[i] = g.value(depth + 1)
		}
		return list
	case 11:
		m := map[string]any{}
		for range int(g.next()) % 4 {
			m[g.piece()] = g.value(depth + 1)
		}
		return m
	case 12:
		return g.record(depth)
	case 13:
		r := g.record(depth)
		return &r
	case 14:
		return []fuzzRecord{g.record(depth)}
	case 15:
		return map[string]fuzzRecord{g.piece(): g.record(depth)}
	case 16:
		return map[int]string{int(g.i): g.piece(), int(g.next()): g.s}
	case 17:
		return map[fuzzText]any{fuzzText(g.piece()): g.value(depth + 1)}
	case 18:
		return time.Unix(g.i, int64(g.next())).UTC()
	case 19:
		return fuzzValMarshaler{JSON: g.piece()}
	case 20:
		return fuzzText(g.piece())
	case 21:
		return [2]any{g.value(depth + 1), g.value(depth + 1)}
	case 22:
		return &fuzzPtrMarshaler{S: g.piece()}
	default:
		return time.Duration(g.i)
	}
}

func (g *fuzzValues) record(depth int) fuzzRecord {
	r := fuzzRecord{
		fuzzEmbedded: fuzzEmbedded{E: g.piece(), S: g.piece()},
		S:            g.piece(), Quoted: g.i, QStr: g.piece(), F: g.f, F32: float32(g.f), U: uint16(g.i),
		B: g.next()%2 == 0, Dur: time.Duration(g.i),
		Ptr: fuzzPtrMarshaler{S: g.piece()}, Val: fuzzValMarshaler{JSON: g.piece()}, Text: fuzzText(g.piece()),
		Skip: g.s, NoTag: g.piece(), hidden: g.s,
	}
	if g.next()%2 == 0 {
		r.fuzzPointed = &fuzzPointed{Q: int(g.next())}
	}
	if g.next()%2 == 0 {
		r.fuzzEmbedded.M = map[string]any{g.piece(): g.value(depth + 1)}
	}
	if g.next()%2 == 0 {
		r.Empty, r.Zero = g.piece(), int(g.next())
	}
	if g.next()%3 == 1 && depth < 4 {
		p := g.record(depth + 1)
		r.P = &p
	}
	r.Any = g.value(depth + 1)
	if g.next()%2 == 0 {
		r.List = []any{g.value(depth + 1)}
	}
	if g.next()%2 == 0 {
		r.Map = map[string]any{g.piece(): g.value(depth + 1)}
	}
	if g.next()%2 == 0 {
		r.When = time.Unix(g.i, 0)
	}
	if g.next()%2 == 0 {
		r.Keys = map[fuzzText]int{fuzzText(g.piece()): 1, fuzzText(g.s): 2}
	}
	if g.next()%2 == 0 {
		r.Ints = map[int8]string{int8(g.i): g.s, int8(g.next()): g.piece()}
	}
	if g.next()%2 == 0 {
		r.Bytes, r.Raw, r.Num = []byte(g.s), json.RawMessage(g.piece()), json.Number(g.piece())
	}
	r.Arr[g.next()%2].S = g.piece()
	return r
}

// FuzzResultText is the differential test of results against
// encoding/json: for any Go value, the text the model reads is byte for byte
// what an encoding/json Encoder with SetEscapeHTML(false) writes (without
// its newline), and it fails exactly when json.Marshal fails. Strings,
// []byte and json.RawMessage are the model's text as they are, and nil is
// no text.
func FuzzResultText(f *testing.F) {
	seeds := []struct {
		choices []byte
		s       string
		f       float64
		i       int64
	}{
		{nil, "", 0, 0},
		{[]byte{1}, "<tag> & \"quote\"", 0, 0},
		{[]byte{11, 3, 4, 1, 10, 2, 2, 3}, "é😀\u2028\u2029\x00\x1f\xff", 1.5, -7},
		{[]byte{12, 5, 5, 5, 5, 5, 5, 5, 5, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, "ab<>&", 1e21, 1 << 60},
		{[]byte{13, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, `{"k":[1,2]}`, 1e-7, 3},
		{[]byte{14, 200, 100, 50, 25, 0, 3, 6, 9, 12, 15, 18, 21}, "[1, 2 ,3]", math.Copysign(0, -1), 1},
		{[]byte{15, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, " 12 ", 3.4e38, 255},
		{[]byte{17, 4, 20}, "fail", 0.1, 0},
		{[]byte{7, 3}, "12abc", 0, 0},
		{[]byte{19, 8}, `"<\u00e9>"`, 0, 0},
		{[]byte{18, 1}, "", 0, 1 << 62},
		{[]byte{21, 22, 3, 16, 5}, "x", 2.5, -1},
		{[]byte{10, 3, 12, 1, 13, 2, 23, 4}, "nested", 123456789, 42},
	}
	for _, s := range seeds {
		f.Add(s.choices, s.s, s.f, s.i)
	}
	f.Fuzz(func(t *testing.T, choices []byte, s string, x float64, i int64) {
		g := &fuzzValues{choices: choices, s: s, f: x, i: i}
		v := g.value(0)
		got, gotErr := textOf(v, false)
		var want []byte
		var wantErr error
		switch r := v.(type) {
		case nil:
		case string:
			want = []byte(r)
		case []byte:
			want = r
		case json.RawMessage:
			want = r
		default:
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			wantErr = enc.Encode(v)
			want = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if _, err := json.Marshal(v); (err != nil) != (wantErr != nil) {
				t.Fatalf("%#v: json.Marshal fails with %v, the Encoder with %v", v, err, wantErr)
			}
		}
		if (wantErr != nil) != (gotErr != nil) || wantErr == nil && got != string(want) {
			t.Fatalf("%#v:\n got %s (%v)\nwant %s (%v)", v, got, gotErr, want, wantErr)
		}
		if gotErr != nil && !strings.HasPrefix(gotErr.Error(), "encode result as JSON: ") {
			t.Errorf("error without context: %v", gotErr)
		}
	})
}
