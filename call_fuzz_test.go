package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/onionkit/onion"
)

// FuzzCall feeds arbitrary text as a model's arguments to tools of several
// shapes: every call ends with a result or an error, never a panic.
func FuzzCall(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"name":"a","p":"low"}`, `{"name":"\ud800","p":"high","times":3}`,
		`{"created_by":"x","id":1,"priority":"low","code":"ABC","ship":{"street":"s","city":"c"},"due":"2026-01-01T00:00:00Z","extra":{"k":"v"},"raw":[1,{"a":null}],"anything":1e400}`,
		`{"name":"a","p":"low","times":1.0}`, `{"name":"a","p":"low","times":1e30}`, `{"name":"a" "p":"low"}`, `{"name":"a",}`,
		`{"item":"x"}`, `{"item":"\u0000"}`, "{\"item\":\"\x01\"}", `{"items":[1,2,3]}`, `  {"name":"a","p":"low"}  x`,
		`{"v":` + strings.Repeat("[", 200), `{"v":` + strings.Repeat(`{"a":`, 150) + `1` + strings.Repeat("}", 150) + `}`,
		`{"s":[[1],[2,3]]}`, `{"m":{"k":[true]}}`, `{"a":1,"a":2}`, `{"small":1` + strings.Repeat("0", 200) + `}`,
		`{"user":"admin","Wait":"1s"}`, `{"user":"bob","Wait":"1s","big":18446744073709551615}`, `{"user":"b","email":null,"Wait":"x"}`,
		`{"tag":"` + slowValue + `"}`, `{"tag":"aaaa!","tags":["` + slowValue + `","` + slowValue + `"]}`,
	} {
		f.Add(seed)
	}
	greet, err := onion.NewTool(Greet)
	if err != nil {
		f.Fatal(err)
	}
	order, err := onion.NewTool(PlaceOrder)
	if err != nil {
		f.Fatal(err)
	}
	tools, err := onion.ToolsFrom(&store{})
	if err != nil {
		f.Fatal(err)
	}
	all := append([]*onion.Tool{greet, order, mustTool(f, Signup), mustTool(f, Anything)}, tools...)
	strict, err := onion.NewAgent("strict", Greet, Signup, onion.Strict())
	if err != nil {
		f.Fatal(err)
	}
	all = append(all, strict.Tools().All()...)
	// A regexp2 pattern that backtracks without end on a run of a's.
	slow, err := onion.NewRawTool("slow", json.RawMessage(`{"type":"object","properties":{
		"tag":{"type":"string","pattern":"^(a+)+(?=!)$"},"tags":{"type":"array","items":{"type":"string","not":{"pattern":"^(a+)+(?=!)$"}}}}}`),
		func(context.Context, json.RawMessage) (any, error) { return "ran", nil })
	if err != nil {
		f.Fatal(err)
	}
	all = append(all, slow)
	f.Fuzz(func(t *testing.T, args string) {
		for _, tool := range all {
			out, err := tool.Call(context.Background(), args)
			var pe *onion.PanicError
			if errors.As(err, &pe) {
				t.Fatalf("%s panicked on %q: %v", tool.Name(), args, pe.Value)
			}
			if err == nil && !json.Valid([]byte(args)) && strings.TrimSpace(args) != "" { // empty arguments mean {}
				t.Fatalf("%s accepted invalid JSON %q (result %q)", tool.Name(), args, out)
			}
			if err != nil && !errors.Is(err, onion.ErrInvalidArguments) && !strings.Contains(err.Error(), "tool") {
				t.Fatalf("%s: an error that is not an argument error: %v", tool.Name(), err)
			}
		}
	})
}

// FuzzCheckerMatchesValidator is the differential test of the checker as a
// fuzz test: for any arguments, a call of the differential test's tools
// (plain and strict) is accepted exactly when a full validator accepts them against
// the strict form sent, with the two leniencies, or against the plain Schema.
func FuzzCheckerMatchesValidator(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tool := range []string{"diff_tool", "diff_unique", "diff_free"} {
		for range 20 {
			f.Add(genArgs(rng, tool))
		}
	}
	f.Add(`{"name":"ab","kind":"a","count":1,"ship":{"street":"x"},"not_admin":"admin"}`)
	f.Add(`{"name":"ab","kind":"a","count":1,"ship":{"street":"x"},"email":"x@"}`)
	type pair struct {
		tool   *onion.Tool
		ref    *santhosh.Schema
		sent   map[string]any
		strict bool
	}
	var pairs []pair
	for _, strict := range []bool{false, true} {
		items := []any{DiffTool, DiffUnique}
		if strict {
			items = append(items, onion.Strict())
		} else {
			items = append(items, DiffFree)
		}
		a, err := onion.NewAgent("diff", items...)
		if err != nil {
			f.Fatal(err)
		}
		for _, tool := range a.Tools().All() {
			sent := tool.Definition().Function.Parameters.(json.RawMessage)
			if !strict {
				sent = tool.Schema() // what the plain form is checked against
			}
			var sentMap, plain map[string]any
			if json.Unmarshal(sent, &sentMap) != nil || json.Unmarshal(tool.Schema(), &plain) != nil {
				f.Fatal("schemas are not JSON")
			}
			if strict {
				withLengths(sentMap, plain)
			}
			checked, _ := json.Marshal(sentMap)
			pairs = append(pairs, pair{tool, reference(f, checked), sentMap, strict})
		}
	}
	f.Fuzz(func(t *testing.T, args string) {
		for _, p := range pairs {
			_, callErr := p.tool.Call(context.Background(), args)
			doc := args
			if strings.TrimSpace(doc) == "" {
				doc = "{}"
			}
			inst, refErr := santhosh.UnmarshalJSON(strings.NewReader(doc))
			if refErr != nil || !json.Valid([]byte(doc)) || hasDuplicateNames(doc) || outsideGoRange(inst) {
				continue // not JSON the reference reads alike, or a Go range check
			}
			refErr = p.ref.Validate(lenient(inst, p.sent, p.strict))
			if (callErr == nil) != (refErr == nil) {
				t.Errorf("strict=%v %s:\n call: %v\n reference: %v", p.strict, args, callErr, refErr)
			}
		}
	})
}

// hasDuplicateNames reports whether an object of doc repeats a name: onion
// refuses such arguments, encoding/json keeps the last.
func hasDuplicateNames(doc string) bool {
	dec := jsontext.NewDecoder(strings.NewReader(doc))
	for {
		if _, err := dec.ReadToken(); err != nil {
			return err != io.EOF
		}
	}
}

// outsideGoRange reports values that the schema accepts and Go cannot
// hold, which the checker refuses by design: nesting or number text past
// onion's bounds, integers past int64, durations and times Go does not
// parse.
func outsideGoRange(inst any) bool {
	var walk func(v any, depth int) bool
	walk = func(v any, depth int) bool {
		if depth > 100 {
			return true
		}
		switch x := v.(type) {
		case json.Number:
			if len(x) > 100 {
				return true
			}
			f, _ := x.Float64()
			return f >= 1<<63 || f < -1<<63
		case map[string]any:
			if s, ok := x["wait"].(string); ok {
				if _, err := time.ParseDuration(s); err != nil {
					return true
				}
			}
			if s, ok := x["when"].(string); ok {
				if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
					return true
				}
			}
			for _, e := range x {
				if walk(e, depth+1) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e, depth+1) {
					return true
				}
			}
		}
		return false
	}
	return walk(inst, 1)
}
