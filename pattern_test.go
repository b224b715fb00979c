package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion"
)

// slowPattern backtracks exponentially in regexp2 on a run of a's: 26 of
// them took 55 s before matches had a time limit.
const slowPattern = `^(a+)+(?=!)$`

// slowValue is a value slowPattern would take hours over.
var slowValue = strings.Repeat("a", 40) + "!"

// TagArgs are the arguments of TagIt.
type TagArgs struct {
	Tag string `json:"tag" jsonschema:"pattern=^(a+)+(?=!)$"`
}

// slowTools are a tool whose tag's pattern is slowPattern, made from Go
// tags and from a raw schema, and whether each ran.
func slowTools(t *testing.T, schema string) (map[string]*onion.Tool, *sync.Map) {
	t.Helper()
	var ran sync.Map
	typed, err := onion.NewTool(func(ctx context.Context, a TagArgs) (string, error) {
		ran.Store("typed", true)
		return "ran", nil
	}, onion.Name("tag_it"), onion.Description("Tags it."))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := onion.NewRawTool("tag_raw", json.RawMessage(schema), func(context.Context, json.RawMessage) (any, error) {
		ran.Store("raw", true)
		return "ran", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*onion.Tool{"typed": typed, "raw": raw}, &ran
}

// A pattern whose match runs away gives up: the call is refused as bad
// arguments naming the parameter and the pattern, and the tool does not
// run, whether the pattern came from a Go tag or a raw schema.
func TestSlowPatternGivesUp(t *testing.T) {
	tools, ran := slowTools(t, `{"type":"object","properties":{"tag":{"type":"string","pattern":"^(a+)+(?=!)$"}},"required":["tag"]}`)
	for name, tool := range tools {
		_, err := tool.Call(context.Background(), `{"tag":"`+slowValue+`"}`)
		if !errors.Is(err, onion.ErrInvalidArguments) {
			t.Fatalf("%s: got %v, want invalid arguments", name, err)
		}
		want := `- tag: the pattern "` + slowPattern + `" gave up after `
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "on 41 characters (one match may take 100ms)") {
			t.Errorf("%s: the error does not say which pattern gave up on what:\n%v", name, err)
		}
		if strings.Contains(err.Error(), "expected a string matching") {
			t.Errorf("%s: a match that gave up is reported as a mismatch:\n%v", name, err)
		}
		if _, ok := ran.Load(name); ok {
			t.Errorf("%s: the tool ran on arguments that were not checked", name)
		}
	}
}

// Under "not", a match that gives up must not count as a mismatch, which
// would accept the value.
func TestSlowPatternUnderNotIsRefused(t *testing.T) {
	tools, ran := slowTools(t, `{"type":"object","properties":{"tag":{"type":"string","not":{"pattern":"^(a+)+(?=!)$"}}}}`)
	_, err := tools["raw"].Call(context.Background(), `{"tag":"`+slowValue+`"}`)
	if !errors.Is(err, onion.ErrInvalidArguments) || !strings.Contains(err.Error(), `- tag: the pattern "^(a+)+(?=!)$" gave up`) {
		t.Errorf("got %v, want the tag refused because its pattern gave up", err)
	}
	if _, ok := ran.Load("raw"); ok {
		t.Error("the tool ran")
	}
}

// After one match gives up, the call's other regexp2 matches are not
// tried (each could take the limit again) and not reported as mismatches;
// problems found by other keywords are still reported.
func TestSlowPatternsGiveUpOnce(t *testing.T) {
	schema := `{"type":"object","properties":{
		"tags":{"type":"array","items":{"type":"string","pattern":"^(a+)+(?=!)$"}},
		"id":{"type":"string","pattern":"^[0-9]+$"}}}`
	tools, _ := slowTools(t, schema)
	tags := strings.Repeat(`"`+slowValue+`",`, 12) + `"b` + slowValue + `"`
	_, err := tools["raw"].Call(context.Background(), `{"tags":[`+tags+`],"id":"x"}`)
	var ae *onion.ArgumentError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v, want an *ArgumentError", err)
	}
	if len(ae.Problems) != 2 || !strings.HasPrefix(ae.Problems[1], `tags[0]: the pattern "^(a+)+(?=!)$" gave up after `) ||
		ae.Problems[0] != `id: expected a string matching "^[0-9]+$", got string "x"` {
		t.Errorf("want the id's mismatch and one pattern that gave up, got:\n%s", strings.Join(ae.Problems, "\n"))
	}
}

// The call's context bounds the check: a call whose context has ended
// does not match at all, and the model reads why.
func TestSlowPatternHonoursContext(t *testing.T) {
	tools, ran := slowTools(t, `{"type":"object","properties":{"tag":{"type":"string","pattern":"^(a+)+(?=!)$"}}}`)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{
		{canceled, "(the call was canceled)"},
		{expired, "(the call's deadline passed)"},
	} {
		for name, tool := range tools {
			_, err := tool.Call(c.ctx, `{"tag":"`+slowValue+`"}`)
			if !errors.Is(err, onion.ErrInvalidArguments) || !strings.Contains(err.Error(), "- tag: the pattern ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: got %v, want the tag refused %s", name, err, c.want)
			}
		}
	}
	ran.Range(func(k, _ any) bool { t.Errorf("%s ran", k); return true })
}

// Concurrent calls of one tool each get their own verdict: the patterns'
// per-call state is held by one call at a time.
func TestLookaroundPatternConcurrentCalls(t *testing.T) {
	tool, err := onion.NewRawTool("code", json.RawMessage(`{"type":"object","properties":{"c":{"type":"string","pattern":"^(?=.*[0-9])[a-z0-9]+$"}}}`),
		func(context.Context, json.RawMessage) (any, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				good := (g+i)%2 == 0
				v := "abc"
				if good {
					v = fmt.Sprintf("abc%d", i)
				}
				_, err := tool.Call(context.Background(), `{"c":"`+v+`"}`)
				if good != (err == nil) {
					t.Errorf("%q: got %v", v, err)
				}
			}
		})
	}
	wg.Wait()
}
