package onion_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// SignupArgs are the arguments of Signup.
type SignupArgs struct {
	User  string    `json:"user" jsonschema:"pattern=^(?!admin)"`
	Email string    `json:"email,omitempty" jsonschema:"format=email"`
	Tags  []string  `json:"tags,omitempty" jsonschema:"uniqueItems=true"`
	Due   time.Time `json:"due,omitzero"`
	Wait  time.Duration
	Big   uint64 `json:"big,omitempty"`
	Small int8   `json:"small,omitempty"`
}

// Signup registers a user.
//
//onion:intent read
func Signup(ctx context.Context, a SignupArgs) (SignupArgs, error) { return a, nil }

// Anything takes any JSON.
//
//onion:intent read
func Anything(ctx context.Context, a struct {
	V any               `json:"v,omitempty"`
	M map[string]any    `json:"m,omitempty"`
	S [][]int           `json:"s,omitempty"`
	R json.RawMessage   `json:"r,omitempty"`
	N map[string][]bool `json:"n,omitempty"`
}) (string, error) {
	return "ran", nil
}

func mustTool(t testing.TB, fn any) *onion.Tool {
	t.Helper()
	tool, err := onion.NewTool(fn)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// Defect 5: a lookaround pattern is applied, not dropped.
func TestLookaroundPatternIsChecked(t *testing.T) {
	tool := mustTool(t, Signup)
	ctx := context.Background()
	if _, err := tool.Call(ctx, `{"user":"admin","Wait":"1s"}`); err == nil || !strings.Contains(err.Error(), `user: expected a string matching "^(?!admin)"`) {
		t.Errorf("admin accepted or wrong message: %v", err)
	}
	if _, err := tool.Call(ctx, `{"user":"bob","Wait":"1s"}`); err != nil {
		t.Errorf("bob refused: %v", err)
	}
	raw, err := onion.NewRawTool("raw", json.RawMessage(`{"type":"object","properties":{"u":{"type":"string","pattern":"^(?!admin)"}},"additionalProperties":false}`),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "ran", nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"u":"admin"}`, `{"u":"bob","other":1}`} {
		if out, err := raw.Call(ctx, args); err == nil {
			t.Errorf("raw tool accepted %s: %s", args, out)
		}
	}
	if _, err := raw.Call(ctx, `{"u":"bob"}`); err != nil {
		t.Errorf("raw tool refused bob: %v", err)
	}
	// A pattern no engine compiles fails at construction, naming it.
	_, err = onion.NewRawTool("bad", json.RawMessage(`{"type":"object","properties":{"u":{"type":"string","pattern":"(?<"}}}`),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "ran", nil })
	if err == nil || !strings.Contains(err.Error(), `(?<`) {
		t.Errorf("bad pattern: err = %v", err)
	}
}

// Defect 4: a format is checked when it is the only thing wrong, and a
// strict null for an optional field does not depend on other keywords.
func TestFormatCheckedAlone(t *testing.T) {
	tool := mustTool(t, Signup)
	_, err := tool.Call(context.Background(), `{"user":"bob","email":"not an address","Wait":"1s"}`)
	if err == nil || !strings.Contains(err.Error(), `email: expected an email address such as ada@example.com, got string "not an address"`) {
		t.Errorf("err = %v", err)
	}
}

func TestStrictNullForOptionalField(t *testing.T) {
	a, err := onion.NewAgent("strict", Signup, onion.Strict())
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := a.Tools().Get("signup")
	for _, args := range []string{
		`{"user":"bob","email":null,"tags":null,"due":null,"Wait":"1s","big":null,"small":null}`,
		`{"user":"bob","Wait":"1s"}`, // left out: not every server enforces strict mode
	} {
		if _, err := tool.Call(context.Background(), args); err != nil {
			t.Errorf("%s: %v", args, err)
		}
	}
	if _, err := tool.Call(context.Background(), `{"user":"bob","Wait":"1s","tags":["a","a"]}`); err == nil {
		t.Error("duplicate tags accepted under uniqueItems")
	}
}

// Defect 6: Definition is what the agent sends.
func TestDefinitionIsWhatIsSent(t *testing.T) {
	for _, strict := range []bool{false, true} {
		items := []any{Signup}
		if strict {
			items = append(items, onion.Strict())
		}
		a, err := onion.NewAgent("d", items...)
		if err != nil {
			t.Fatal(err)
		}
		tool, _ := a.Tools().Get("signup")
		got, want := tool.Definition(), a.Definitions()[0]
		if !reflect.DeepEqual(got, want) || got.Function.Strict != strict {
			t.Errorf("strict=%v: Definition %+v, sent %+v", strict, got.Function, want.Function)
		}
	}
}

// Defect 8: uint64 values above MaxInt64 fit.
func TestUint64AboveMaxInt64(t *testing.T) {
	tool := mustTool(t, Signup)
	out, err := tool.Call(context.Background(), `{"user":"bob","Wait":"1s","big":18446744073709551615}`)
	if err != nil || !strings.Contains(out, `"big":18446744073709551615`) {
		t.Errorf("out %s, err %v", out, err)
	}
	if _, err := tool.Call(context.Background(), `{"user":"bob","Wait":"1s","big":18446744073709551616}`); err == nil {
		t.Error("2^64 accepted for a uint64")
	}
}

// Defect 11: deep nesting is an argument error, not a crash.
func TestDeepArgumentsAreRefused(t *testing.T) {
	deep := strings.Repeat("[", 3<<20)
	tool := mustTool(t, Anything)
	raw, err := onion.NewRawTool("raw", nil, func(ctx context.Context, args json.RawMessage) (any, error) { return "ran", nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"v":` + deep, `{"m":{"k":` + deep, `{"s":` + deep, `{"r":` + deep, `{"n":{"k":` + deep, `{"x":` + deep, deep} {
		for _, tl := range []*onion.Tool{tool, raw} {
			_, err := tl.Call(context.Background(), args)
			if err == nil || !strings.Contains(err.Error(), "arguments nest deeper than 100 levels") {
				t.Errorf("%s on %.10s…: err = %.300v", tl.Name(), args, err)
			}
		}
	}
	// Just below the bound it is fine.
	ok := `{"v":` + strings.Repeat("[", 99) + strings.Repeat("]", 99) + `}`
	if _, err := tool.Call(context.Background(), ok); err != nil {
		t.Errorf("99 levels refused: %v", err)
	}

	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("anything", `{"v":`+deep)), oniontest.Text("done"))
	a := newAgent(t, s, Anything)
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if msg := toolMessages(t, s, 1)[res.ToolCalls[0].ID]; !strings.Contains(msg, "arguments nest deeper than 100 levels") {
		t.Errorf("the model read %.300q", msg)
	}
}

// Defect 12: a number of a million digits is refused by its length.
func TestHugeNumberIsRefusedByLength(t *testing.T) {
	huge := "1" + strings.Repeat("0", 1<<20)
	tool := mustTool(t, Signup)
	raw, err := onion.NewRawTool("raw", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":5}}}`),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "ran", nil })
	if err != nil {
		t.Fatal(err)
	}
	any := mustTool(t, Anything)
	for _, c := range []struct {
		tool *onion.Tool
		args string
	}{
		{tool, `{"user":"bob","Wait":"1s","small":` + huge + `}`},
		{raw, `{"n":` + huge + `}`},
		{any, `{"v":[` + huge + `]}`},
	} {
		_, err := c.tool.Call(context.Background(), c.args)
		if err == nil || !strings.Contains(err.Error(), "a number in the arguments is longer than 100 characters") {
			t.Errorf("%s: err = %.300v", c.tool.Name(), err)
		}
	}
}

// Messages name what a value should look like, and the parameter list
// names formats.
func TestMessagesAModelCanActOn(t *testing.T) {
	tool := mustTool(t, Signup)
	_, err := tool.Call(context.Background(), `{"user":"bob","Wait":"soon","due":"tomorrow"}`)
	for _, want := range []string{
		`Wait: expected a Go duration such as 90s or 1h30m, got string "soon"`,
		`due: expected an RFC 3339 date-time such as 2026-01-02T15:04:05Z, got string "tomorrow"`,
		`due (string, date-time)`,
		`email (string, email)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

// Under Strict, a raw tool is held to the strict form it is sent in.
func TestStrictRawToolIsHeldToItsStrictForm(t *testing.T) {
	raw, err := onion.NewRawTool("raw", json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}`),
		func(ctx context.Context, args json.RawMessage) (any, error) { return "ran", nil })
	if err != nil {
		t.Fatal(err)
	}
	a, err := onion.NewAgent("strict", raw, onion.Strict())
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := a.Tools().Get("raw")
	ctx := context.Background()
	for _, args := range []string{`{"q":"x"}`, `{"q":"x","n":null}`, `{"q":"x","n":2}`} {
		if _, err := tool.Call(ctx, args); err != nil {
			t.Errorf("%s: %v", args, err)
		}
	}
	for _, args := range []string{`{"q":"x","other":1}`, `{"n":2}`, `{"q":null}`} {
		if _, err := tool.Call(ctx, args); err == nil {
			t.Errorf("%s accepted", args)
		}
	}
	// The tool itself, outside the strict agent, takes other properties.
	if _, err := raw.Call(ctx, `{"q":"x","other":1}`); err != nil {
		t.Errorf("plain raw tool: %v", err)
	}
}

// OneOf takes a value of one of two types.
//
//onion:intent read
func OneOf(ctx context.Context, a struct {
	V any `json:"v" jsonschema:"oneof_type=string;integer"`
}) (string, error) {
	return "ran", nil
}

// A free-form field with a schema of its own is held to it.
func TestFreeFormFieldKeepsItsSchema(t *testing.T) {
	tool := mustTool(t, OneOf)
	if _, err := tool.Call(context.Background(), `{"v":true}`); err == nil {
		t.Error("a boolean accepted for string or integer")
	}
	for _, args := range []string{`{"v":"x"}`, `{"v":3}`} {
		if _, err := tool.Call(context.Background(), args); err != nil {
			t.Errorf("%s: %v", args, err)
		}
	}
}
