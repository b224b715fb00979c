package onion

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The argument structs the flat plan is held to the jsontext plan with.

type flatAll struct {
	S   string  `json:"s"`
	E   string  `json:"e" jsonschema:"enum=low,enum=high"`
	N   int     `json:"n" jsonschema:"minimum=1,maximum=9"`
	I8  int8    `json:"i8,omitempty"`
	I16 int16   `json:"i16,omitempty" jsonschema:"minimum=-5"`
	I32 int32   `json:"i32,omitempty"`
	I64 int64   `json:"i64,omitempty"`
	U8  uint8   `json:"u8,omitempty"`
	U16 uint16  `json:"u16,omitempty" jsonschema:"maximum=1000"`
	U32 uint32  `json:"u32,omitempty"`
	U   uint    `json:"u,omitempty" jsonschema:"enum=1,enum=3,enum=18446744073709551615"`
	F32 float32 `json:"f32,omitempty"`
	F   float64 `json:"f,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1e300"`
	B   bool    `json:"b,omitempty"`
	L   string  `json:"l,omitempty" jsonschema:"minLength=2,maxLength=4"`
	P   string  `json:"p,omitempty" jsonschema:"pattern=^[A-Z]{3}$"`
	D   string  `json:"d,omitempty" jsonschema:"format=date"`
	Def int     `json:"def,omitempty" jsonschema:"default=7"`
	Str string  `json:"str,omitempty" jsonschema:"default=x"`
	Lvl flatLvl `json:"lvl,omitempty"`
	Ü   string  `json:"ü,omitempty"`
}

type flatLvl int16

type flatInner struct {
	X int `json:"x"`
}

type flatEmbedded struct {
	flatInner
	Y string `json:"y"`
}

// flatFull has a keyword the plans leave to the validator (multipleOf).
type flatFull struct {
	M int    `json:"m" jsonschema:"multipleOf=3"`
	S string `json:"s,omitempty"`
}

// flatCases are the types of the differential tests, with the positional
// struct of add(a float64, b int).
func flatCases(t testing.TB) []*paramSchema {
	t.Helper()
	pos, err := positionalStruct([]reflect.Type{reflect.TypeFor[float64](), reflect.TypeFor[int]()}, []string{"a", "b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []*paramSchema
	for _, typ := range []reflect.Type{reflect.TypeFor[flatAll](), reflect.TypeFor[flatEmbedded](), reflect.TypeFor[flatFull](), pos} {
		p, err := paramsFor(typ, "")
		if err != nil {
			t.Fatal(err)
		}
		if p.plan.flat == nil {
			t.Fatalf("%s has no flat plan", typ)
		}
		out = append(out, p)
	}
	return out
}

// checkFlat holds the flat plan of p to the jsontext plan on args: what
// the flat plan accepts, the jsontext plan accepts with the same value;
// and decodeArgs, which takes the flat plan first, gives the same value or
// the same error text as the jsontext plan alone.
func checkFlat(t *testing.T, p *paramSchema, args string) (flat bool) {
	t.Helper()
	typ := p.plan.typ
	ctx := context.Background()
	fast := reflect.New(typ)
	flat = p.plan.flat.decode(args, fast.UnsafePointer())
	slow := reflect.New(typ)
	slowErr := p.decodeValue(ctx, "tool", args, slow.Elem())
	if flat && !p.fullCheck {
		if slowErr != nil {
			t.Fatalf("%s: the flat plan accepts %q, the jsontext plan refuses it: %v", typ, args, slowErr)
		}
		if !reflect.DeepEqual(fast.Elem().Interface(), slow.Elem().Interface()) {
			t.Fatalf("%s: %q: flat plan %+v, jsontext plan %+v", typ, args, fast.Elem(), slow.Elem())
		}
	}
	both := reflect.New(typ)
	err := p.decodeArgs(ctx, "tool", args, both.Elem())
	if (err == nil) != (slowErr == nil) || err != nil && err.Error() != slowErr.Error() {
		t.Fatalf("%s: %q: decodeArgs says %v, the jsontext plan %v", typ, args, err, slowErr)
	}
	if err == nil && !reflect.DeepEqual(both.Elem().Interface(), slow.Elem().Interface()) {
		t.Fatalf("%s: %q: decodeArgs %+v, jsontext plan %+v", typ, args, both.Elem(), slow.Elem())
	}
	return flat
}

var flatSeeds = []string{
	`{"s":"a","e":"low","n":2}`,
	` { "s" : "a" , "e" : "high" , "n" : 9 } `,
	"{\n\t\"s\":\"a\",\r\n\"e\":\"low\",\"n\":1}",
	`{"s":"a","e":"low","n":2,"i8":-128,"i16":-5,"i32":2147483647,"i64":-9223372036854775808,"u8":255,"u16":1000,"u32":4294967295,"u":18446744073709551615}`,
	`{"s":"a","e":"low","n":2,"i8":128}`, `{"s":"a","e":"low","n":2,"i16":-6}`, `{"s":"a","e":"low","n":2,"u8":256}`,
	`{"s":"a","e":"low","n":2,"u":2}`, `{"s":"a","e":"low","n":2,"u":-0}`, `{"s":"a","e":"low","n":2,"i64":-0}`,
	`{"s":"a","e":"low","n":2.0}`, `{"s":"a","e":"low","n":2e0}`, `{"s":"a","e":"low","n":20}`, `{"s":"a","e":"low","n":0}`,
	`{"s":"a","e":"low","n":1e1}`, `{"s":"a","e":"low","n":"2"}`, `{"s":"a","e":"low","n":02}`, `{"s":"a","e":"low","n":-}`,
	`{"s":"a","e":"low","n":2,"f32":3.5e38}`, `{"s":"a","e":"low","n":2,"f32":-1.5e-45}`, `{"s":"a","e":"low","n":2,"f":0}`,
	`{"s":"a","e":"low","n":2,"f":1e400}`, `{"s":"a","e":"low","n":2,"f":1E-400}`, `{"s":"a","e":"low","n":2,"f":0.1}`,
	`{"s":"a","e":"low","n":2,"f":1.}`, `{"s":"a","e":"low","n":2,"f":.5}`, `{"s":"a","e":"low","n":2,"f":1e+2}`,
	`{"s":"a","e":"mid","n":2}`, `{"s":"a","n":2}`, `{"s":"a","e":"low"}`, `{"e":"low","n":2}`, `{}`, ``, ` `, `[]`, `null`,
	`{"s":"a","e":"low","n":2,"s":"b"}`, `{"s":"a","e":"low","n":2,"x":1}`, `{"s":"a","e":"low","n":2,}`, `{"s":"a","e":"low","n":2}x`,
	`{"s":"a\"b","e":"low","n":2}`, `{"s":"a\u0062","e":"low","n":2}`, "{\"s\":\"a\x01\",\"e\":\"low\",\"n\":2}",
	"{\"s\":\"caf\xc3\xa9\",\"e\":\"low\",\"n\":2}", "{\"s\":\"caf\xe9\",\"e\":\"low\",\"n\":2}", "{\"s\":\"\xed\xa0\x80\",\"e\":\"low\",\"n\":2}",
	`{"s":"a","e":"low","n":2,"b":true}`, `{"s":"a","e":"low","n":2,"b":false}`, `{"s":"a","e":"low","n":2,"b":tru}`, `{"s":"a","e":"low","n":2,"b":1}`,
	`{"s":"a","e":"low","n":2,"l":"é"}`, `{"s":"a","e":"low","n":2,"l":"ééé"}`, `{"s":"a","e":"low","n":2,"l":"ééééé"}`,
	`{"s":"a","e":"low","n":2,"p":"LIS"}`, `{"s":"a","e":"low","n":2,"p":"lis"}`, `{"s":"a","e":"low","n":2,"d":"2026-12-24"}`, `{"s":"a","e":"low","n":2,"d":"2026-13-24"}`,
	`{"s":"a","e":"low","n":2,"def":null,"str":null}`, `{"s":"a","e":"low","n":2,"def":3,"str":"y"}`, `{"s":null,"e":"low","n":2}`,
	`{"s":"a","e":"low","n":2,"lvl":-32768}`, `{"s":"a","e":"low","n":2,"ü":"x"}`, `{"s":"a","e":"low","n":2,"\u00fc":"x"}`,
	`{"s":"a","e":"low","n":2,"n\u0000":1}`, `{"s":"a","e":"low","n":{}}`, `{"s":["a"],"e":"low","n":2}`, `{"s":"a","e":"low","n":2,"i8":1` + strings.Repeat("0", 120) + `}`,
	`{"s":"a","e":"low","n":2,"f":1e300}`, `{"s":"a","e":"low","n":2,"f":1.0000000000000000001e300}`, `{"s":"a","e":"low","n":2,"f":0.9999999999999999999e300}`,
	`{"s":"a","e":"low","n":2,"f":-0}`, `{"s":"a","e":"low","n":2,"f":5e-324}`, `{"s":"a","e":"low","n":2,"f":1e-400}`, `{"s":"a","e":"low","n":2,"i16":-5.0}`,
	`{"s":"a","e":"low","n":9.0000000000000000001}`, `{"s":"a","e":"low","n":1e0}`, `{"s":"a","e":"low","n":9007199254740993}`,
	`{"s":"a","e":"low","n":2,"u16":1000.5}`, `{"s":"a","e":"low","n":2,"u16":1001}`, `{"s":"a","e":"low","n":2,"u":3}`, `{"s":"a","e":"low","n":2,"u":3.0}`,
	`{"s":"a","e":"low","n":2`, `{"s":"a","e":"low","n":2}}`, `{"s":"a","e":"low""n":2}`, `{"s":"a" ,"e":"low","n":2}`, `{"s":"a","e":"low","n":2 }`,
	`{"s":"a","e":"low","n":2,"s":"a"}`, `{"s":"a","n":2,"e":"low"}`, `{"e":"low","s":"a","n":2}`, `{"s":"a","e":"low","n" :2}`, `{"s":"a","e":"low","nn":2}`,
	`{"s":"","e":"low","n":2}`, `{"s":"a","e":"low","n":2,"i8":1,"i16":2,"i32":3,"i64":4,"u8":5,"u16":6,"u32":7,"u":1,"f32":1,"f":1,"b":true,"l":"ab","p":"ABC","d":"2026-01-01","def":1,"str":"s","lvl":1,"ü":"x"}`,
	`{"x":1,"y":"b"}`, `{"y":"b"}`, `{"m":3}`, `{"m":4}`, `{"m":3,"s":"a"}`,
	`{"a":1.5,"b":2}`, `{"a":1,"b":-3}`, `{"a":"1","b":2}`, `{"b":2}`, `{"a":1.5,"b":2.5}`,
}

// TestFlatPlanMatchesJSONText runs the differential test on its seeds,
// and checks that the flat plan takes the common arguments itself.
func TestFlatPlanMatchesJSONText(t *testing.T) {
	cases := flatCases(t)
	for _, args := range flatSeeds {
		for _, p := range cases {
			checkFlat(t, p, args)
		}
	}
	for _, c := range []struct {
		p    *paramSchema
		args string
	}{
		{cases[0], `{"s":"a","e":"low","n":2}`},
		{cases[0], ` { "s" : "café" , "e" : "high" , "n" : 9, "f": 2.5e-3, "b": true, "def": null, "lvl": -3 } `},
		{cases[0], `{"s":"a","e":"low","n":2,"u":18446744073709551615,"f32":1.5,"l":"ab","p":"OSL","d":"2026-12-24"}`},
		{cases[1], `{"x":1,"y":"b"}`},
		{cases[3], `{"a":1.5,"b":2}`},
	} {
		if !c.p.plan.flat.decode(c.args, reflect.New(c.p.plan.typ).UnsafePointer()) {
			t.Errorf("%s: the flat plan gives up on %s", c.p.plan.typ, c.args)
		}
	}
}

// TestFlatPlanOnlyFlat: the flat plan is for objects of plain scalars.
func TestFlatPlanOnlyFlat(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct {
			A []string `json:"a"`
		}](),
		reflect.TypeFor[struct {
			A *int `json:"a"`
		}](),
		reflect.TypeFor[struct {
			A time.Duration `json:"a"`
		}](),
		reflect.TypeFor[struct {
			A time.Time `json:"a"`
		}](),
		reflect.TypeFor[struct {
			A flatInner `json:"a"`
		}](),
		reflect.TypeFor[struct {
			*flatInner
			B int `json:"b"`
		}](),
	} {
		p, err := paramsFor(typ, "")
		if err != nil {
			t.Fatal(err)
		}
		if p.plan.flat != nil {
			t.Errorf("%s has a flat plan", typ)
		}
	}
}

// FuzzFlatDecode is the differential test of the flat plan against the
// jsontext plan (checkFlat) for any arguments.
func FuzzFlatDecode(f *testing.F) {
	for _, s := range flatSeeds {
		f.Add(s)
	}
	cases := flatCases(f)
	f.Fuzz(func(t *testing.T, args string) {
		for _, p := range cases {
			checkFlat(t, p, args)
		}
	})
}

// TestShortFloat holds shortFloat to strconv.ParseFloat, bit for bit, on
// the numbers it takes: decimals of up to 53 bits of digits.
func TestShortFloat(t *testing.T) {
	check := func(lit string) {
		v, ok := shortFloat(lit)
		if !ok {
			return
		}
		w, err := strconv.ParseFloat(lit, 64)
		if err != nil || math.Float64bits(v) != math.Float64bits(w) {
			t.Fatalf("shortFloat(%s) = %v, ParseFloat %v, %v", lit, v, w, err)
		}
	}
	for _, s := range []string{"0", "-0", "0.0", "-0.0", "1.5", "0.1", "0.30000000000000004", "9007199254740991", "9007199254740993",
		"123456789.123456789", "0.0000000000000000000001", "0.00000000000000000000001", "1.7976931348623157", "-3.75", "99.99"} {
		check(s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		s := strconv.FormatUint(r.Uint64N(1<<53), 10)
		if k := r.IntN(23); k > 0 {
			s = strings.Repeat("0", max(0, k+1-len(s))) + s
			s = s[:len(s)-k] + "." + s[len(s)-k:]
		}
		if r.IntN(2) == 0 {
			s = "-" + s
		}
		check(s)
		check(strconv.FormatFloat(r.Float64()*1000, 'f', -1, 64))
	}
}
