package onion

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
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

// encPtrMarshaler marshals itself only through a pointer: encoding/json
// calls it for an addressable value, and encodes the fields otherwise.
type encPtrMarshaler struct{ V int }

func (*encPtrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"custom <&>"`), nil }

type encHasPtrMarshaler struct {
	F encPtrMarshaler `json:"f"`
}

// encKey is a map key that writes itself as text.
type encKey struct{ a, b string }

func (k encKey) MarshalText() ([]byte, error) { return []byte(k.a + "/" + k.b), nil }

// encWrap holds an any behind its own MarshalJSON: its values are bounded
// whatever the any holds.
type encWrap struct{ V any }

func (w encWrap) MarshalJSON() ([]byte, error) { return []byte(`"wrapped"`), nil }

type encLink struct {
	Next *encLink `json:"next"`
}

// encBase is embedded unexported: reflect marks what is reached through
// it read-only, and encoding/json still writes its fields.
type encBase struct {
	Meta map[string]any `json:"meta"`
	List []any          `json:"list"`
}

type encMeta map[string]any

type encWithBase struct {
	encBase
	encMeta
	*encLink
	N int `json:"n"`
}

type encHidden struct {
	hidden any
	Shown  int `json:"shown"`
	Skip   any `json:"-"`
}

// htmlEscaped is b as json.Marshal would have written it: results keep
// <, > and & as they are, and only that differs.
func htmlEscaped(b []byte) []byte {
	var out bytes.Buffer
	json.HTMLEscape(&out, b)
	return out.Bytes()
}

// sameAsEncodingJSON fails t unless the result encoder agrees with
// json.Marshal on v: the same error or none, the same bytes but for HTML
// escaping.
func sameAsEncodingJSON(t *testing.T, v any) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, gotErr := appendJSON(nil, v)
	if (wantErr != nil) != (gotErr != nil) || wantErr == nil && !bytes.Equal(htmlEscaped(got), want) {
		t.Errorf("%T %v:\n got %s (%v)\nwant %s (%v)", v, v, got, gotErr, want, wantErr)
	}
}

// TestEncodeMatchesEncodingJSON checks the result encoder against the
// standard library, byte for byte once HTML is escaped alike.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	s := "opt"
	n := 7
	values := []any{
		nil, "plain", "<tag> & \"quote\" \\ \n\t\r\b\f\x01 \u2028 \u2029 é 😀", "bad \xff utf8",
		true, 0, -12, uint64(math.MaxUint64), 3.5, 1e21, 1e-7, 123456789.0, float32(0.1), math.Copysign(0, -1), 1e20,
		[]string{"a", "b"}, []string(nil), []int{}, map[string]int{"b": 2, "a": 1}, map[string]int(nil),
		[]byte("bytes"), json.RawMessage(`{"x": 1}`), json.RawMessage(`"<&>"`), time.Date(2026, 11, 30, 1, 2, 3, 4, time.UTC),
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
		// The field is addressable through a pointer, a slice or a
		// pointer to an array, so its pointer's MarshalJSON is called.
		encHasPtrMarshaler{F: encPtrMarshaler{V: 1}}, &encHasPtrMarshaler{F: encPtrMarshaler{V: 1}},
		[]encHasPtrMarshaler{{}}, &[1]encHasPtrMarshaler{}, [1]encHasPtrMarshaler{},
		map[string]encHasPtrMarshaler{"k": {}}, map[string]*encHasPtrMarshaler{"k": {}},
		map[encKey]int{{"a", "b"}: 1, {"<", ">"}: 2}, map[int]string{10: "x", -1: "y", 2: "z"},
		encWrap{V: []any{1}}, encHidden{hidden: 1, Shown: 2, Skip: 3},
		encWithBase{encBase: encBase{Meta: map[string]any{"k": []any{1, map[string]any{"x": nil}}}, List: []any{2}},
			encMeta: encMeta{"m": 1}, encLink: &encLink{}, N: 3},
	}
	for _, v := range values {
		sameAsEncodingJSON(t, v)
	}
	for _, bad := range []any{json.Number("12abc"), json.Number(" 1"), math.NaN(), math.Inf(1), map[string]float64{"x": math.Inf(-1)}, make(chan int), json.RawMessage(`{`)} {
		if _, err := appendJSON(nil, bad); err == nil {
			t.Errorf("%T: no error", bad)
		}
	}
}

// TestEncodeLeavesHTMLAsItIs: <, > and & reach the model as they are,
// inside strings, keys and a MarshalJSON's output alike.
func TestEncodeLeavesHTMLAsItIs(t *testing.T) {
	v := map[string]any{"<k&>": "a < b && c > d", "m": &encHasPtrMarshaler{}}
	got, err := appendJSON(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"<k&>":"a < b && c > d","m":{"f":"custom <&>"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestEncodeBoundsDepth: a result that is cyclic or nests deeper than
// maxResultDepth fails with errResultTooDeep, and never overflows the stack
// (which no recover catches) or loops forever.
func TestEncodeBoundsDepth(t *testing.T) {
	selfMap := map[string]any{}
	selfMap["self"] = selfMap
	selfSlice := make([]any, 1)
	selfSlice[0] = selfSlice
	selfLink := &encLink{}
	selfLink.Next = selfLink
	selfAny := new(any) // a cycle that nests no JSON at all
	*selfAny = selfAny
	var deepAny any = "bottom"
	for range 100_000 {
		deepAny = []any{deepAny}
	}
	var deepLink *encLink
	for range 100_000 {
		deepLink = &encLink{Next: deepLink}
	}
	deepMap := map[string]any{}
	for range 100_000 {
		deepMap = map[string]any{"k": deepMap}
	}
	for name, v := range map[string]any{
		"self map": selfMap, "self slice": selfSlice, "self pointer": selfLink, "self any": selfAny,
		"any 100k deep": deepAny, "list 100k long": deepLink, "map 100k deep": deepMap,
		"inside a struct": encOuter{Any: deepAny}, "inside a map": map[string]any{"x": []any{1, selfMap}},
		"inside an embedded type": encWithBase{encBase: encBase{Meta: selfMap}},
	} {
		_, err := appendJSON(nil, v)
		if !errors.Is(err, errResultTooDeep) {
			t.Errorf("%s: err = %v, want %v", name, err, errResultTooDeep)
		}
	}
	if !strings.Contains(errResultTooDeep.Error(), "10000 levels") {
		t.Errorf("the error does not give the bound: %v", errResultTooDeep)
	}

	// At the bound, an any holding a slice being two levels: within it
	// encoded as encoding/json encodes it, one more level fails. []any is
	// walked without reflection, encList with it: they agree.
	for _, wrap := range []func(any) any{
		func(v any) any { return []any{v} },
		func(v any) any { return encList{v} },
	} {
		var v any = 1
		for range maxResultDepth / 2 {
			v = wrap(v)
		}
		sameAsEncodingJSON(t, v)
		if _, err := appendJSON(nil, wrap(v)); !errors.Is(err, errResultTooDeep) {
			t.Errorf("%T one level beyond the bound: err = %v", v, err)
		}
	}
}

type encList []any

// TestUnbounded pins which types are walked before encoding: only those
// that reach an interface or themselves through what encoding/json
// encodes.
func TestUnbounded(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{encInner{}, false},
		{[]encInner{}, false},
		{map[string][]int{}, false},
		{time.Time{}, false},
		{encOuter{}, true}, // its Any and Iface fields
		{encSelf{}, true},  // recursive through a slice
		{&encLink{}, true}, // recursive through a pointer
		{[]any{}, true},
		{map[string]any{}, true},
		{encWrap{}, false},   // its MarshalJSON stops encoding/json
		{encHidden{}, false}, // the any fields are never encoded
	} {
		if got := unbounded(reflect.TypeOf(c.v)); got != c.want {
			t.Errorf("unbounded(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}

// encSink keeps benchmark results alive.
var encSink string

// BenchmarkResultText is onion's result path (depth check included) next
// to a bare encoding/json Encoder, on the shapes bench/encode_test.go
// compares the codecs on.
func BenchmarkResultText(b *testing.B) {
	items := make([]encInner, 20)
	for i := range items {
		items[i] = encInner{A: i, B: "Call the airline about the refund"}
	}
	for _, c := range []struct {
		name string
		v    any
	}{
		{"struct", encInner{A: 2, B: "BK-2410-7"}},
		{"slice", items},
		{"map", map[string]any{"city": "Oslo", "temp": 4.5, "tags": []any{"rain", "wind"}, "ok": true, "count": 12}},
		{"deep", encOuter{Any: []any{map[string]any{"k": []any{1, 2, 3}}}}},
	} {
		b.Run(c.name+"/encoder", func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			for b.Loop() {
				buf.Reset()
				if err := enc.Encode(c.v); err != nil {
					b.Fatal(err)
				}
				encSink = string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
			}
		})
		b.Run(c.name+"/onion", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				text, err := textOf(c.v, false)
				if err != nil {
					b.Fatal(err)
				}
				encSink = text
			}
		})
	}
}
