package onion

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

type scalarAll struct {
	S    string  `json:"s"`
	OS   string  `json:"os,omitempty"`
	B    bool    `json:"b"`
	OB   bool    `json:"ob,omitempty"`
	I    int     `json:"i"`
	I8   int8    `json:"i8"`
	I16  int16   `json:"i16,omitempty"`
	I32  int32   `json:"i32"`
	I64  int64   `json:"i64"`
	U    uint    `json:"u"`
	U8   uint8   `json:"u8,omitempty"`
	U16  uint16  `json:"u16"`
	U32  uint32  `json:"u32"`
	U64  uint64  `json:"u64"`
	UP   uintptr `json:"up"`
	F32  float32 `json:"f32"`
	F64  float64 `json:"f64"`
	OF   float64 `json:"of,omitempty"`
	Skip string  `json:"-"`
	NoTag,
	Untagged string
	Named   scalarNamed `json:"named"`
	hidden  string
	EmptyNm int `json:",omitempty"`
}

type scalarNamed string

type scalarOmitted struct {
	A string `json:"a,omitempty"`
	B int    `json:"b,omitempty"`
}

// scalarValues builds one value of each type the scalar encoder takes from
// the fuzzer's inputs.
func scalarValues(s string, i int64, u uint64, f float64, b bool) []any {
	f32 := float32(f)
	all := scalarAll{
		S: s, OS: s, B: b, OB: b, I: int(i), I8: int8(i), I16: int16(i), I32: int32(i), I64: i,
		U: uint(u), U8: uint8(u), U16: uint16(u), U32: uint32(u), U64: u, UP: uintptr(u),
		F32: f32, F64: f, OF: f, Skip: s, NoTag: s, Untagged: s, Named: scalarNamed(s), hidden: s, EmptyNm: int(i),
	}
	var omitted scalarOmitted
	if b {
		omitted = scalarOmitted{A: s, B: int(i)}
	}
	// Whole numbers, which take a shorter way, around the edge of it too.
	whole := []any{math.Trunc(f), math.Mod(math.Trunc(f), 1e15), math.Mod(math.Trunc(f), 1e16), float64(i % (1 << 53)), float32(i % (1 << 24))}
	return append([]any{all, omitted, f, f32, i, int8(i), u, uint16(u), b, scalarNamed(s), struct{}{}}, whole...)
}

// FuzzScalarResultMatchesEncodingJSON is the differential test of the
// scalar encoder against encoding/json: for every value of the types it
// takes, it writes byte for byte what an Encoder with SetEscapeHTML(false)
// writes, less the newline, and it gives way (ok false) exactly where
// encoding/json fails.
func FuzzScalarResultMatchesEncodingJSON(f *testing.F) {
	f.Add("", int64(0), uint64(0), 0.0, false)
	f.Add("LISOSL2026-12-24", int64(2), uint64(9), 99.5, true)
	f.Add("<tag> & \"quote\" \\ /", int64(-1), uint64(math.MaxUint64), 1e21, true)
	f.Add("é😀\u2028\u2029\x00\x1f\x7f\xff\b\f\n\r\t", int64(math.MinInt64), uint64(1)<<63, 1e-7, true)
	f.Add("\xe2\x80", int64(math.MaxInt64), uint64(255), math.Copysign(0, -1), false)
	f.Add("x", int64(300), uint64(70000), 3.4e38, true)
	f.Add("y", int64(1), uint64(1), 1e-6, true)
	f.Add("z", int64(1), uint64(1), 123456789.125, true)
	f.Add("nan", int64(1), uint64(1), math.NaN(), true)
	f.Add("inf", int64(1), uint64(1), math.Inf(-1), true)
	f.Add("big32", int64(1), uint64(1), 1e39, true)
	f.Add("whole", int64(1), uint64(1), 199.0, true)
	f.Add("whole-", int64(1), uint64(1), -123456789.0, true)
	f.Add("whole32", int64(1), uint64(1), 123456789.0, true)
	f.Add("edge", int64(1), uint64(1), 1e15-1, true)
	f.Add("edge+", int64(1), uint64(1), 1e15, true)
	f.Add("2^53", int64(1), uint64(1), 9007199254740993.0, true)
	f.Add("-2^53", int64(1), uint64(1), -9007199254740992.0, true)
	f.Fuzz(func(t *testing.T, s string, i int64, u uint64, x float64, b bool) {
		for _, v := range scalarValues(s, i, u, x, b) {
			e := newScalarEncoder(reflect.TypeOf(v))
			if e == nil {
				if _, ok := v.(scalarNamed); ok {
					continue // a string type is the model's text at the top
				}
				t.Fatalf("%T: no scalar encoder", v)
			}
			got, ok := e.text(v)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			err := enc.Encode(v)
			if err != nil {
				if ok {
					t.Fatalf("%T %+v: scalar encoder wrote %s, encoding/json failed: %v", v, v, got, err)
				}
				continue
			}
			want := string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
			if !ok {
				t.Fatalf("%T %+v: scalar encoder gave way, encoding/json wrote %s", v, v, want)
			}
			if got != want {
				t.Fatalf("%T %+v:\n got %s\nwant %s", v, v, got, want)
			}
		}
	})
}

type scalarSelfMarshaled struct{ A int }

func (scalarSelfMarshaled) MarshalJSON() ([]byte, error) { return []byte(`"own"`), nil }

type scalarPtrText int

func (*scalarPtrText) MarshalText() ([]byte, error) { return []byte("t"), nil }

// TestScalarEncoderTakesOnlyPlainTypes: every type whose encoding/json
// bytes depend on more than its fields' kinds goes to encoding/json.
func TestScalarEncoderTakesOnlyPlainTypes(t *testing.T) {
	type embedded struct{ A int }
	refused := []any{
		"text",
		scalarNamed("x"),
		json.Number("1"),
		time.Time{},
		scalarSelfMarshaled{},
		scalarPtrText(1),
		struct{ embedded }{},
		struct {
			A int `json:"a,string"`
		}{},
		struct {
			A int `json:"a,omitzero"`
		}{},
		struct {
			A int `json:"a b"`
		}{},
		struct {
			A int `json:"é"`
		}{},
		struct {
			A int `json:"X"`
			X int
		}{},
		struct{ T time.Time }{},
		struct{ N json.Number }{},
		struct{ P *int }{},
		struct{ L []int }{},
		struct{ A any }{},
		struct{ M scalarSelfMarshaled }{},
		struct{ P scalarPtrText }{},
		[]int{1},
		map[string]int{},
	}
	for _, v := range refused {
		if newScalarEncoder(reflect.TypeOf(v)) != nil {
			t.Errorf("%T: took it; want encoding/json to write it", v)
		}
	}
	for _, v := range []any{scalarAll{}, scalarOmitted{}, 1.5, 3, true, struct{}{}} {
		if newScalarEncoder(reflect.TypeOf(v)) == nil {
			t.Errorf("%T: refused it; want the scalar encoder to write it", v)
		}
	}
}

// TestScalarResultThroughCall: a tool whose result is a struct of scalars
// gives encoding/json's text through Call, and a NaN in it still fails
// the call with encoding/json's error.
func TestScalarResultThroughCall(t *testing.T) {
	type out struct {
		Ref   string  `json:"ref"`
		Price float64 `json:"price"`
	}
	tool, err := NewTool(func(args struct {
		Ref   string  `json:"ref"`
		Price float64 `json:"price"`
	}) out {
		if args.Ref == "nan" {
			return out{Ref: args.Ref, Price: math.NaN()}
		}
		return out{Ref: args.Ref, Price: args.Price}
	}, Name("price"), Description("Prices."), Read)
	if err != nil {
		t.Fatal(err)
	}
	if tool.resultEnc == nil {
		t.Fatal("the result's struct of scalars did not get a scalar encoder")
	}
	got, err := tool.Call(t.Context(), `{"ref":"<a&b>\u2028","price":1e-7}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"ref":"<a&b>\u2028","price":1e-7}`; got != want {
		t.Errorf("Call = %s, want %s", got, want)
	}
	_, err = tool.Call(t.Context(), `{"ref":"nan","price":1}`)
	want := "encode result as JSON: json: unsupported value: NaN"
	if err == nil || err.Error() != want {
		t.Errorf("Call with a NaN result: err = %v, want %q", err, want)
	}
}
