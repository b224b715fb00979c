package onion_test

import (
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// Receipt marshals itself through a pointer only.
type Receipt struct{ V int }

// MarshalJSON writes the receipt as the model should read it.
func (*Receipt) MarshalJSON() ([]byte, error) { return []byte(`"custom"`), nil }

// Invoice holds a receipt in a field: addressable when the invoice is reached
// through a pointer.
type Invoice struct {
	F Receipt `json:"f"`
}

// GetInvoice returns an invoice whose receipt marshals itself.
//
//onion:intent read
func GetInvoice() (*Invoice, error) {
	return &Invoice{F: Receipt{V: 1}}, nil
}

// Notes returns the note as a field of a struct.
//
// note: the note to keep
//
//onion:intent read
func Notes(note string) (map[string]string, error) {
	return map[string]string{"note": note}, nil
}

// TestResultCallsPointerMarshalJSON: an addressable field whose pointer has
// a MarshalJSON is encoded by that method, as encoding/json does.
func TestResultCallsPointerMarshalJSON(t *testing.T) {
	tool, err := onion.NewTool(GetInvoice)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tool.Call(context.Background(), `{}`)
	if err != nil || got != `{"f":"custom"}` {
		t.Errorf("Call = %s, %v; want {\"f\":\"custom\"}", got, err)
	}
}

// TestResultKeepsHTML: <, > and & reach the model as they are, not as
// \u003c, \u003e and \u0026.
func TestResultKeepsHTML(t *testing.T) {
	tool, err := onion.NewTool(Notes)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tool.Call(context.Background(), `{"note":"<b>a & b</b>"}`)
	if err != nil || got != `{"note":"<b>a & b</b>"}` {
		t.Errorf("Call = %s, %v", got, err)
	}
}

// Tangle returns a value that nests without end, or deeper than any
// result may.
//
// shape: which value
//
//onion:intent read
func Tangle(shape string) (any, error) {
	switch shape {
	case "cycle":
		m := map[string]any{}
		m["self"] = m
		return m, nil
	case "pointer":
		p := new(any)
		*p = p
		return p, nil
	}
	var v any = "bottom"
	for range 100_000 {
		v = []any{v}
	}
	return v, nil
}

// TestResultTooDeepFailsTheCall: a tool result that is cyclic or nested
// 100,000 levels deep is a clear tool failure, through Tool.Call and through
// the loop, where the model reads it and the run goes on.
func TestResultTooDeepFailsTheCall(t *testing.T) {
	const want = "nests more than 10000 levels deep"
	tool, err := onion.NewTool(Tangle)
	if err != nil {
		t.Fatal(err)
	}
	for _, shape := range []string{"cycle", "pointer", "deep"} {
		got, err := tool.Call(context.Background(), `{"shape":"`+shape+`"}`)
		if err == nil || !strings.Contains(err.Error(), want) || got != "" {
			t.Errorf("%s: Call = %q, %v; want the error %q", shape, got, err, want)
		}
	}

	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("tangle", `{"shape":"cycle"}`), oniontest.Call("tangle", `{"shape":"deep"}`)),
		oniontest.Text("done"),
	)
	a := newAgent(t, s, Tangle)
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done" || len(res.ToolCalls) != 2 {
		t.Fatalf("result = %+v", res)
	}
	msgs := toolMessages(t, s, 1)
	for _, c := range res.ToolCalls {
		if c.Outcome != onion.Failed || !strings.Contains(msgs[c.ID], want) {
			t.Errorf("call %s: outcome %s, the model read %q; want failed, %q", c.Arguments, c.Outcome, msgs[c.ID], want)
		}
	}
}

// Fragile marshals itself by panicking.
type Fragile struct{}

// MarshalJSON panics, as buggy tool code does.
func (Fragile) MarshalJSON() ([]byte, error) { panic("marshal exploded") }

// GetFragile returns a value whose MarshalJSON panics.
//
//onion:intent read
func GetFragile() ([]Fragile, error) { return []Fragile{{}}, nil }

// TestResultMarshalPanicFailsTheCall: a panic in a result's MarshalJSON is
// the call's error, not the end of the process.
func TestResultMarshalPanicFailsTheCall(t *testing.T) {
	tool, err := onion.NewTool(GetFragile)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tool.Call(context.Background(), `{}`)
	if err == nil || !strings.Contains(err.Error(), "panicked: marshal exploded") || got != "" {
		t.Errorf("Call = %q, %v; want the panic as the error", got, err)
	}
}
