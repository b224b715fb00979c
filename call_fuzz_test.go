package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

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
	all := append([]*onion.Tool{greet, order}, tools...)
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
		}
	})
}
