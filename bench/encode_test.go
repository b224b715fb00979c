package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// The codecs onion could encode tool results with, on the results tools
// typically return. onion uses the encoder row: encoding/json with HTML
// escaping off. Each writes what it would hand the model, as a string.

// Status is a string type: a string itself is the model's text, unencoded,
// but a named one goes through the encoder.
type Status string

// Item is one element of a list result.
type Item struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Done     bool     `json:"done"`
	Priority int      `json:"priority"`
	Tags     []string `json:"tags,omitempty"`
	Notes    string   `json:"notes,omitempty"`
}

func resultShapes() []struct {
	name string
	v    any
} {
	items := make([]Item, 20)
	for i := range items {
		items[i] = Item{ID: fmt.Sprintf("t-%d", i), Title: "Call the airline about the refund", Priority: i % 3, Tags: []string{"travel", "money"}}
	}
	return []struct {
		name string
		v    any
	}{
		{"String", Status("The weather in Oslo is 4°C, light rain, wind 5 m/s from the north-west.")},
		{"Struct", Booking{Ref: "BK-2410-7", Seats: 2, Price: 349.5}},
		{"Slice", items},
		{"Map", map[string]any{"city": "Oslo", "temp": 4.5, "tags": []any{"rain", "wind"}, "ok": true, "count": 12}},
	}
}

var (
	// jsonv2Compat is json v2 writing encoding/json's bytes, HTML escaping off.
	jsonv2Compat = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false))
	// sonicNoHTML is sonic's encoding/json-compatible config, HTML escaping off.
	sonicNoHTML = sonic.Config{SortMapKeys: true, CompactMarshaler: true, ValidateString: true}.Froze()
)

// BenchmarkResultString, BenchmarkResultStruct, BenchmarkResultSlice and
// BenchmarkResultMap encode one result; the baseline is json.Marshal.
func BenchmarkResultString(b *testing.B) { benchResult(b, resultShapes()[0].v) }
func BenchmarkResultStruct(b *testing.B) { benchResult(b, resultShapes()[1].v) }
func BenchmarkResultSlice(b *testing.B)  { benchResult(b, resultShapes()[2].v) }
func BenchmarkResultMap(b *testing.B)    { benchResult(b, resultShapes()[3].v) }

func benchResult(b *testing.B, v any) {
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			sink = string(out)
		}
	})
	b.Run("encoder", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			if err := enc.Encode(v); err != nil {
				b.Fatal(err)
			}
			sink = string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		}
	})
	b.Run("jsonv2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := jsonv2.Marshal(v, jsonv2Compat)
			if err != nil {
				b.Fatal(err)
			}
			sink = string(out)
		}
	})
	b.Run("sonic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := sonicNoHTML.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			sink = string(out)
		}
	})
}
