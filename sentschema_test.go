package onion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
)

// BoundsArgs are the parameters of Between.
type BoundsArgs struct {
	Low   int           `json:"low" doc:"the bound, such that low <= high & low > 0"`
	High  int           `json:"high"`
	Pause time.Duration `json:"pause,omitempty"`
}

// Between reports whether the bounds are in order.
func Between(args BoundsArgs) bool { return args.Low <= args.High }

// withoutClosed removes every "additionalProperties": false from a decoded
// JSON value, and the pattern of every duration described in words.
func withoutClosed(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if k == "additionalProperties" && e == false {
				continue
			}
			if d, _ := v["description"].(string); k == "pattern" && strings.Contains(d, `a duration such as "90s"`) {
				continue
			}
			out[k] = withoutClosed(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutClosed(e)
		}
		return out
	}
	return v
}

func decoded(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDefinitionIsSchemaLeaner: outside strict mode a tool made of a Go
// func is sent its Schema without "additionalProperties": false, nested
// objects' included, and without the pattern of a duration its description
// states, and nothing else left out (a map keeps the schema of its values,
// a pattern of the user's stays); calls are still held to the full Schema,
// so a property the model was not told of and a duration that is not one
// are refused; strings are sent without HTML escapes; a Strict agent's
// definition and a raw tool's schema keep it all.
func TestDefinitionIsSchemaLeaner(t *testing.T) {
	order, err := onion.NewTool(PlaceOrder)
	if err != nil {
		t.Fatal(err)
	}
	sent := order.Definition().Function.Parameters.(json.RawMessage)
	if bytes.Contains(sent, []byte(`"additionalProperties":false`)) {
		t.Errorf("sent %s", sent)
	}
	if !bytes.Contains(sent, []byte(`"additionalProperties":{"type":"string"}`)) {
		t.Errorf("the map's value schema is gone: %s", sent)
	}
	if !bytes.Contains(sent, []byte(`"pattern":"^[A-Z]{3}$"`)) || bytes.Contains(sent, []byte(`(ns|us|µs|ms|s|m|h)`)) {
		t.Errorf("the user's pattern gone or the duration's kept: %s", sent)
	}
	if got, want := decoded(t, sent), withoutClosed(decoded(t, order.Schema())); !reflect.DeepEqual(got, want) {
		t.Errorf("sent %s\nwant Schema without additionalProperties false: %v", sent, want)
	}
	if !bytes.Contains(order.Schema(), []byte(`"additionalProperties":false`)) {
		t.Errorf("Schema lost additionalProperties false: %s", order.Schema())
	}

	between, err := onion.NewTool(Between)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := between.Call(context.Background(), `{"low":1,"high":2,"step":1}`); !errors.Is(err, onion.ErrInvalidArguments) {
		t.Errorf("an unknown property: err %v, want ErrInvalidArguments", err)
	}
	if _, err := between.Call(context.Background(), `{"low":1,"high":2,"pause":"soon"}`); !errors.Is(err, onion.ErrInvalidArguments) {
		t.Errorf("a pause of \"soon\": err %v, want ErrInvalidArguments", err)
	}
	if out, err := between.Call(context.Background(), `{"low":1,"high":2,"pause":"1m30s"}`); err != nil || out != "true" {
		t.Errorf("a pause of 1m30s: %q, %v", out, err)
	}
	if p := between.Definition().Function.Parameters.(json.RawMessage); !bytes.Contains(p, []byte(`low <= high & low > 0`)) {
		t.Errorf("sent with HTML escapes: %s", p)
	}

	a, err := onion.NewAgent("strict", Between, onion.Strict())
	if err != nil {
		t.Fatal(err)
	}
	if p := a.Definitions()[0].Function.Parameters.(json.RawMessage); !bytes.Contains(p, []byte(`"additionalProperties":false`)) ||
		!bytes.Contains(p, []byte(`(ns|us|µs|ms|s|m|h)`)) {
		t.Errorf("strict form without additionalProperties false or the duration's pattern: %s", p)
	}

	raw := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`)
	rt, err := onion.NewRawTool("raw", raw, func(ctx context.Context, args json.RawMessage) (any, error) { return "ok", nil },
		onion.Description("A raw tool."))
	if err != nil {
		t.Fatal(err)
	}
	if p := rt.Definition().Function.Parameters.(json.RawMessage); !bytes.Equal(p, raw) {
		t.Errorf("a raw tool's schema was sent as %s", p)
	}
}
