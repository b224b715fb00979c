package onion

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

type encInner struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

type encEmbedded struct {
	E string `json:"e"`
}

type encOuter struct {
	encEmbedded
	*encInner
	Name    string          `json:"name"`
	Opt     *string         `json:"opt,omitempty"`
	Zero    time.Time       `json:"zero,omitzero"`
	When    time.Time       `json:"when"`
	Tags    []string        `json:"tags"`
	Nums    []float64       `json:"nums,omitempty"`
	Map     map[string]int  `json:"map"`
	Any     any             `json:"any"`
	Raw     json.RawMessage `json:"raw,omitempty"`
	Bytes   []byte          `json:"bytes"`
	Arr     [2]bool         `json:"arr"`
	Nested  []encInner      `json:"nested"`
	Str     int             `json:"str,string"`
	Skip    string          `json:"-"`
	IntKeys map[int]string  `json:"int_keys,omitempty"`
	Ptrs    map[string]*int `json:"ptrs"`
	Iface   map[string]any  `json:"iface"`
	Dur     time.Duration   `json:"dur"`
	U8      uint8           `json:"u8"`
	F32     float32         `json:"f32"`
	hidden  string
}

type encPlain struct {
	encEmbedded
	N    *encInner      `json:"n"`
	List []*encInner    `json:"list"`
	M    map[string]any `json:"m,omitempty"`
	Zero encInner       `json:"zero,omitzero"`
}

type encSelf struct {
	Name string    `json:"name"`
	Kids []encSelf `json:"kids,omitempty"`
}

// TestEncodeMatchesEncodingJSON checks the result encoder against the
// standard library, byte for byte.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	s := "opt"
	n := 7
	values := []any{
		nil, "plain", "<tag> & \"quote\" \\ \n\t\r\b\f\x01 \u2028 \u2029 é 😀", "bad \xff utf8",
		true, 0, -12, uint64(math.MaxUint64), 3.5, 1e21, 1e-7, 123456789.0, float32(0.1), math.Copysign(0, -1), 1e20,
		[]string{"a", "b"}, []string(nil), []int{}, map[string]int{"b": 2, "a": 1}, map[string]int(nil),
		[]byte("bytes"), json.RawMessage(`{"x": 1}`), time.Date(2026, 11, 30, 1, 2, 3, 4, time.UTC),
		&n, (*int)(nil), []any{1, "x", nil, map[string]any{"k": []any{true}}},
		encInner{A: 1}, &encInner{A: 2, B: "b"},
		encOuter{Name: "x", Opt: &s, Tags: []string{"<a>"}, Map: map[string]int{"z": 1, "a": 2}, Any: 3.25,
			Bytes: []byte{1, 2}, Nested: []encInner{{A: 1}}, Str: 5, Ptrs: map[string]*int{"p": &n, "nil": nil},
			Iface: map[string]any{"k": encInner{A: 9}}, Dur: time.Second, U8: 200, F32: 1.1, hidden: "h"},
		encOuter{encInner: &encInner{A: 4}},
		encPlain{N: &encInner{A: 1}, List: []*encInner{nil, {A: 2}}},
		encPlain{M: map[string]any{}},
		encSelf{Name: "root", Kids: []encSelf{{Name: "kid"}}},
		[2]int{1, 2}, map[string][]string{"k": nil},
		json.Number("123456789012345678901234567890"), json.Number(""), []json.Number{"1.5e3", "-0"},
	}
	for _, v := range values {
		want, wantErr := json.Marshal(v)
		got, gotErr := appendJSON(nil, v)
		if (wantErr != nil) != (gotErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%T %v:\n got %s (%v)\nwant %s (%v)", v, v, got, gotErr, want, wantErr)
		}
	}
	for _, bad := range []any{json.Number("12abc"), json.Number(" 1"), math.NaN(), math.Inf(1), map[string]float64{"x": math.Inf(-1)}, make(chan int)} {
		if _, err := appendJSON(nil, bad); err == nil {
			t.Errorf("%T: no error", bad)
		}
	}
}

func FuzzEncodeString(f *testing.F) {
	for _, s := range []string{"", "a", "<>&", "\u2028", "\xff\xfe", "\x00\x1f", `"\`, "é😀"} {
		f.Add(s, 1.5)
	}
	f.Fuzz(func(t *testing.T, s string, x float64) {
		v := map[string]any{s: []any{s, x}}
		want, wantErr := json.Marshal(v)
		got, gotErr := appendJSON(nil, v)
		if (wantErr != nil) != (gotErr != nil) || wantErr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q %v:\n got %s (%v)\nwant %s (%v)", s, x, got, gotErr, want, wantErr)
		}
	})
}
