package onion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/onionkit/onion"
)

// DiffInner is a nested object of DiffArgs.
type DiffInner struct {
	Street string `json:"street" jsonschema:"minLength=1"`
	Zip    *int   `json:"zip,omitempty" jsonschema:"minimum=1000,maximum=99999"`
}

// DiffArgs holds a field for every keyword onion's schemas carry.
type DiffArgs struct {
	Name     string        `json:"name" jsonschema:"minLength=2,maxLength=5"`
	Kind     string        `json:"kind" jsonschema:"enum=a,enum=b"`
	Code     string        `json:"code,omitempty" jsonschema:"pattern=^[A-Z]{2}$"`
	NotAdmin string        `json:"not_admin,omitempty" jsonschema:"pattern=^(?!admin)"`
	Email    string        `json:"email,omitempty" jsonschema:"format=email"`
	URI      string        `json:"uri,omitempty" jsonschema:"format=uri"`
	UUID     string        `json:"uuid,omitempty" jsonschema:"format=uuid"`
	IP       string        `json:"ip,omitempty" jsonschema:"format=ipv4"`
	Date     string        `json:"date,omitempty" jsonschema:"format=date"`
	When     time.Time     `json:"when,omitzero"`
	Wait     time.Duration `json:"wait,omitempty"`
	Count    int           `json:"count" jsonschema:"minimum=1,maximum=9"`
	Ratio    float64       `json:"ratio,omitempty" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1"`
	Level    int8          `json:"level,omitempty"`
	Big      uint64        `json:"big,omitempty"`
	Flag     bool          `json:"flag,omitempty"`
	Tags     []string      `json:"tags,omitempty" jsonschema:"minItems=1,maxItems=3"`
	Nums     []int         `json:"nums,omitempty"`
	Ship     DiffInner     `json:"ship"`
	Opt      *DiffInner    `json:"opt,omitempty"`
	Ptr      *string       `json:"ptr,omitempty"`
	Def      int           `json:"def,omitempty" jsonschema:"default=3"`
	Prio     Priority      `json:"prio,omitempty"`
	Lvl      Level         `json:"lvl,omitempty"`
}

// DiffTool takes DiffArgs.
//
//onion:intent read
func DiffTool(ctx context.Context, a DiffArgs) (string, error) { return "ran", nil }

// DiffUnique has keywords the plan leaves to the validator.
//
//onion:intent read
func DiffUnique(ctx context.Context, a struct {
	Tags []string `json:"tags,omitempty" jsonschema:"uniqueItems=true"`
	Note *string  `json:"note,omitempty"`
	Step int      `json:"step,omitempty" jsonschema:"multipleOf=5"`
	// Choice has a schema of its own: checked by the validator.
	Choice any `json:"choice,omitempty" jsonschema:"oneof_type=string;integer"`
}) (string, error) {
	return "ran", nil
}

// DiffFree takes values strict mode cannot express.
//
//onion:intent read
func DiffFree(ctx context.Context, a struct {
	M map[string]int `json:"m,omitempty"`
	A any            `json:"a,omitempty"`
	L [][]string     `json:"l"`
}) (string, error) {
	return "ran", nil
}

// DiffAdd adds.
//
// a: the first
// b: the second
//
//onion:intent read
func DiffAdd(ctx context.Context, a int, b float64) (float64, error) { return float64(a) + b, nil }

// candidates are the values tried for each property: good ones, bad ones
// and edge cases. Numbers beyond what the Go type holds are left out: Go's
// range is the one check beyond the schema (int, int64, uint64, float32).
var candidates = map[string][]string{
	"name":      {`"ab"`, `"abcde"`, `"a"`, `"abcdef"`, `"éé"`, `""`, `5`},
	"kind":      {`"a"`, `"b"`, `"c"`, `""`, `1`},
	"code":      {`"AB"`, `"ab"`, `"ABC"`, `""`},
	"not_admin": {`"bob"`, `"admin"`, `"administrator"`, `""`, `"xadmin"`},
	"email":     {`"ada@example.com"`, `"not an address"`, `""`, `"a@b"`, `7`},
	"uri":       {`"https://example.com/a"`, `"/relative"`, `"::"`, `"mailto:a@b.c"`},
	"uuid":      {`"123e4567-e89b-12d3-a456-426614174000"`, `"123"`, `"123e4567e89b12d3a456426614174000"`},
	"ip":        {`"192.0.2.1"`, `"256.0.0.1"`, `"::1"`, `"1.2.3"`},
	"date":      {`"2026-01-02"`, `"2026-13-02"`, `"tomorrow"`},
	"when":      {`"2026-01-02T15:04:05Z"`, `"2026-01-02T15:04:05.5+01:00"`, `"2026-01-02"`, `"yesterday"`, `0`},
	"wait":      {`"90s"`, `"1h30m"`, `"-1.5h"`, `"soon"`, `"90"`, `90`, `""`},
	"count":     {`1`, `9`, `0`, `10`, `5.0`, `5.5`, `1e0`, `"3"`, `-1`},
	"ratio":     {`0.5`, `0`, `1`, `0.999`, `1e-3`, `-0.1`, `"x"`},
	"level":     {`0`, `127`, `128`, `-128`, `-129`, `1.5`},
	"big":       {`0`, `18446744073709551615`, `9223372036854775808`, `-1`, `1.5`},
	"step":      {`5`, `10`, `7`, `0`, `-5`},
	"flag":      {`true`, `false`, `"true"`, `0`},
	"tags":      {`["a"]`, `["a","b","c"]`, `[]`, `["a","b","c","d"]`, `["a","a"]`, `[1]`, `"a"`, `[null]`},
	"nums":      {`[]`, `[1,2]`, `[1.5]`, `[null]`, `[1,"2"]`, `{}`},
	"ship":      {`{"street":"x"}`, `{"street":""}`, `{"street":"s","zip":500}`, `{"street":"s","zip":12345}`, `{"street":"s","zip":null}`, `{}`, `{"street":"s","extra":1}`, `"ship"`},
	"opt":       {`{"street":"x"}`, `{"street":"x","zip":1000}`, `{}`, `[]`},
	"ptr":       {`"x"`, `""`, `1`},
	"def":       {`3`, `4`, `"3"`},
	"prio":      {`"low"`, `"high"`, `"urgent"`},
	"lvl":       {`2`, `1`, `3`, `2.0`, `7`, `"2"`},
	"choice":    {`"x"`, `3`, `true`, `1.5`, `[]`},
	"m":         {`{}`, `{"k":1}`, `{"k":"v"}`, `{"k":null}`, `[]`, `{"k":5.0}`, `{"k":1e2}`, `{"k":1.5}`, `{"a":1,"b":2}`},
	"a":         {`1`, `"x"`, `[1,{"k":[null]}]`, `{}`},
	"l":         {`[]`, `[["a"],[]]`, `[[1]]`, `[null]`, `[["a",null]]`, `null`},
	"a_num":     {`1`, `-3`, `1.5`, `"1"`},
	"b_num":     {`1.5`, `0`, `true`},
	"note":      {`"x"`, `1`},
}

// fieldsOf lists a tool's candidate properties.
var fieldsOf = map[string][]string{
	"diff_tool":   {"name", "kind", "code", "not_admin", "email", "uri", "uuid", "ip", "date", "when", "wait", "count", "ratio", "level", "big", "flag", "tags", "nums", "ship", "opt", "ptr", "def", "prio", "lvl"},
	"diff_unique": {"tags", "note", "step", "choice"},
	"diff_free":   {"m", "a", "l"},
	"diff_add":    {"a", "b"},
}

// genArgs makes one argument document for the named fields: a good
// document (the first candidate of every field) with a few fields
// changed: left out, null, another candidate or a value of a wrong type.
func genArgs(rng *rand.Rand, tool string) string {
	if rng.IntN(50) == 0 {
		return []string{`[]`, `null`, `"x"`, `{}`, ``}[rng.IntN(5)]
	}
	fields := fieldsOf[tool]
	changes := []int{0, 1, 1, 2, 3, len(fields)}[rng.IntN(6)]
	changed := map[string]bool{}
	for range changes {
		changed[fields[rng.IntN(len(fields))]] = true
	}
	var parts []string
	for _, f := range fields {
		pool := candidates[f]
		if tool == "diff_add" {
			pool = candidates[f+"_num"]
		}
		if !changed[f] {
			parts = append(parts, fmt.Sprintf("%q:%s", f, pool[0]))
			continue
		}
		switch r := rng.IntN(100); {
		case r < 20: // left out
		case r < 35:
			parts = append(parts, fmt.Sprintf("%q:null", f))
		case r < 90:
			parts = append(parts, fmt.Sprintf("%q:%s", f, pool[rng.IntN(len(pool))]))
		default:
			wrong := []string{`1`, `"x"`, `true`, `[]`, `{}`, `1.5`}
			parts = append(parts, fmt.Sprintf("%q:%s", f, wrong[rng.IntN(len(wrong))]))
		}
	}
	if rng.IntN(20) == 0 {
		parts = append(parts, `"unknown":1`)
	}
	rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	return "{" + strings.Join(parts, ",") + "}"
}

// reference compiles a schema as an independent, full JSON Schema
// validator: santhosh-tekuri/jsonschema with formats asserted and
// patterns in regexp2's ECMAScript mode.
func reference(t testing.TB, schema []byte) *santhosh.Schema {
	t.Helper()
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := santhosh.NewCompiler()
	c.AssertFormat()
	c.UseRegexpEngine(func(s string) (santhosh.Regexp, error) {
		re, err := regexp2.Compile(s, regexp2.ECMAScript)
		if err != nil {
			return nil, err
		}
		return regexp2Adapter{re}, nil
	})
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type regexp2Adapter struct{ re *regexp2.Regexp }

func (r regexp2Adapter) MatchString(s string) bool { ok, _ := r.re.MatchString(s); return ok }
func (r regexp2Adapter) String() string            { return r.re.String() }

// lenient applies the two leniencies to an instance, as the rule states
// them, from the schema sent: null for an optional property counts as
// absent; under strict mode an optional property (one that may be null)
// may be left out.
func lenient(inst any, schema map[string]any, strict bool) any {
	props, _ := schema["properties"].(map[string]any)
	switch x := inst.(type) {
	case map[string]any:
		req, _ := schema["required"].([]any)
		for k, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				continue // a boolean schema
			}
			inner, optional := ps, !slices.Contains(req, any(k))
			if alts, ok := ps["anyOf"].([]any); ok && len(alts) == 2 && strict {
				inner, optional = alts[0].(map[string]any), true
			}
			v, present := x[k]
			switch {
			case !present && strict && optional:
				x[k] = nil
			case present && v == nil && optional && !strict:
				delete(x, k)
			case present && v != nil:
				x[k] = lenient(v, inner, strict)
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i := range x {
				x[i] = lenient(x[i], items, strict)
			}
		}
	}
	return inst
}

// withLengths copies minLength and maxLength, the keywords strict mode
// cannot carry and onion still checks, from the plain schema into the
// strict one.
func withLengths(strict, plain map[string]any) {
	for _, k := range []string{"minLength", "maxLength"} {
		if v, ok := plain[k]; ok {
			strict[k] = v
		}
	}
	sp, _ := strict["properties"].(map[string]any)
	pp, _ := plain["properties"].(map[string]any)
	for k, p := range pp {
		s, _ := sp[k].(map[string]any)
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if alts, ok := s["anyOf"].([]any); ok {
			s = alts[0].(map[string]any)
		}
		if s != nil {
			withLengths(s, pm)
		}
	}
	if si, ok := strict["items"].(map[string]any); ok {
		withLengths(si, plain["items"].(map[string]any))
	}
}

func decodeMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCheckerMatchesValidator is the differential test of the one checker:
// over many generated argument documents, a call is accepted exactly when
// a full validator accepts the arguments against the tool's schema: the
// strict form sent to the model, with the two leniencies, or the plain
// Schema, which the plain form sent differs from only by leaving out
// "additionalProperties": false (TestDefinitionIsSchemaLeaner).
func TestCheckerMatchesValidator(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	for _, strict := range []bool{false, true} {
		items := []any{DiffTool, DiffUnique, DiffAdd}
		if !strict {
			items = append(items, DiffFree)
		} else {
			items = append(items, onion.Strict())
		}
		a, err := onion.NewAgent("diff", items...)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range a.Tools().All() {
			sent := tool.Definition().Function.Parameters.(json.RawMessage)
			if !strict {
				sent = tool.Schema()
			}
			sentMap := decodeMap(t, sent)
			checked := sent
			if strict {
				withLengths(sentMap, decodeMap(t, tool.Schema()))
				checked, _ = json.Marshal(sentMap)
			}
			ref := reference(t, checked)
			rng := rand.New(rand.NewPCG(1, uint64(len(tool.Name()))))
			accepted, rejected := 0, 0
			for range n {
				args := genArgs(rng, tool.Name())
				_, callErr := tool.Call(context.Background(), args)
				if callErr != nil && !errors.Is(callErr, onion.ErrInvalidArguments) {
					t.Fatalf("%s %s: %v", tool.Name(), args, callErr)
				}
				doc := args
				if strings.TrimSpace(doc) == "" {
					doc = "{}"
				}
				inst, err := santhosh.UnmarshalJSON(strings.NewReader(doc))
				refErr := err
				if err == nil {
					refErr = ref.Validate(lenient(inst, sentMap, strict))
				}
				if (callErr == nil) != (refErr == nil) {
					t.Errorf("strict=%v %s %s:\n call: %v\n reference: %v", strict, tool.Name(), args, callErr, refErr)
				}
				if callErr == nil {
					accepted++
				} else {
					rejected++
				}
			}
			t.Logf("strict=%v %s: %d accepted, %d rejected", strict, tool.Name(), accepted, rejected)
			if accepted < n/50 || rejected < n/50 {
				t.Errorf("strict=%v %s: %d accepted, %d rejected: the generator does not reach both sides", strict, tool.Name(), accepted, rejected)
			}
		}
	}
}
