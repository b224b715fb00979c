package onion

import (
	"encoding/json"
	"reflect"
	"testing"
)

type fuzzAnswer struct {
	City string   `json:"city" jsonschema:"minLength=1"`
	N    int8     `json:"n"`
	Tags []string `json:"tags,omitempty" jsonschema:"maxItems=3"`
	Note *string  `json:"note,omitempty"`
}

// FuzzAnswerDecode feeds the typed answer's decoder whatever a model may
// send, for a struct answer and a wrapped one: it never panics, every
// rejected answer says why, and an accepted one encodes back to an answer
// that is accepted and encodes the same.
func FuzzAnswerDecode(f *testing.F) {
	for _, s := range []string{
		`{"city":"Paris","n":3}`, `{"city":"","n":300}`, "```json\n{\"city\":\"x\",\"n\":1,\"note\":null}\n```",
		`{"answer":[1,2]}`, `{"answer":["a"]}`, ``, `   `, `null`, `[`, `{"city":"a","n":1,"tags":["a","b","c","d"]}`,
	} {
		f.Add(s)
	}
	types := []reflect.Type{reflect.TypeFor[fuzzAnswer](), reflect.TypeFor[[]string](), reflect.TypeFor[*fuzzAnswer]()}
	ats := make([]*answerType, len(types))
	for i, typ := range types {
		at, err := answerTypeFor(typ, "")
		if err != nil {
			f.Fatal(err)
		}
		ats[i] = at
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, at := range ats {
			r := &answerRun{typ: at}
			v, err := r.value(text)
			if err != nil {
				if ae, ok := err.(*AnswerError); !ok || len(ae.Problems) == 0 || ae.Raw != text {
					t.Fatalf("%s: %q: err %v", at.goType, text, err)
				}
				continue
			}
			b, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if at.wrapped {
				b, _ = json.Marshal(map[string]json.RawMessage{"answer": b})
			}
			again, err := (&answerRun{typ: at}).value(string(b))
			if err != nil {
				t.Fatalf("%s: %q accepted as %#v, but not its encoding %s: %v", at.goType, text, v.Interface(), b, err)
			}
			if b2, _ := json.Marshal(again.Interface()); at.wrapped && string(b2) != string(b[len(`{"answer":`):len(b)-1]) || !at.wrapped && string(b2) != string(b) {
				t.Fatalf("%s: %q accepted as %s, then as %s", at.goType, text, b, b2)
			}
		}
	})
}

// BenchmarkAnswerDecode is the cost of checking one typed answer: the
// argument checker's decode, as for a tool call.
func BenchmarkAnswerDecode(b *testing.B) {
	at, err := answerTypeFor(reflect.TypeFor[fuzzAnswer](), "")
	if err != nil {
		b.Fatal(err)
	}
	const text = `{"city":"Paris","n":3,"tags":["a","b"],"note":null}`
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := at.decode(text); problems != nil {
			b.Fatal(problems)
		}
	}
}
