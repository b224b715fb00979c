package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test -run %s -update and review the diff.\ngot:\n%s", path, t.Name(), got)
	}
}

// Priority orders tickets.
type Priority string

// The priorities.
const (
	Low  Priority = "low"
	High Priority = "high"
)

// Level is how urgent a ticket is.
type Level int

// The levels.
const (
	Minor Level = iota + 1
	Major
	Critical
)

// Address is where a customer lives.
type Address struct {
	// Street and number.
	Street string `json:"street"`
	City   string `json:"city" jsonschema:"description=the city name"`
}

// Order is everything the order tool takes: every kind of field onion
// makes a schema for.
type Order struct {
	ID       uint              `json:"id"`
	Priority Priority          `json:"priority"`
	Level    Level             `json:"level,omitempty"`
	Quantity int               `json:"quantity" jsonschema:"minimum=1,maximum=99,default=1"`
	Code     string            `json:"code" jsonschema:"pattern=^[A-Z]{3}$"`
	Note     *string           `json:"note" jsonschema:"maxLength=200"`
	Tags     []string          `json:"tags,omitempty" doc:"free labels"`
	Ship     Address           `json:"ship"`
	Due      time.Time         `json:"due"`
	Wait     time.Duration     `json:"wait,omitempty"`
	Extra    map[string]string `json:"extra,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Anything any               `json:"anything,omitempty"`
}

// PlaceOrder places an order.
func PlaceOrder(o Order) (Order, error) { return o, nil }

// Booking has keywords strict mode leaves out.
type Booking struct {
	Seats int     `json:"seats" jsonschema:"default=1,minimum=1"`
	Note  string  `json:"note,omitempty" jsonschema:"maxLength=20"`
	Ship  Address `json:"ship"`
}

// Book books seats.
func Book(b Booking) (Booking, error) { return b, nil }

// Greet says hello to someone.
//
// - name: who to greet
// - times: how often
func Greet(name string, times *int, p Priority) string { return "hi " + name }

// TestSchemasGolden: the function declarations onion's generated
// schemas become on the Gemini wire, plain and in strict mode.
func TestSchemasGolden(t *testing.T) {
	var out bytes.Buffer
	for _, strict := range []bool{false, true} {
		s := oniontest.NewServer(t, oniontest.Text("ok"))
		items := []any{PlaceOrder, Greet}
		if strict {
			items = []any{Book, Greet, onion.Strict()} // strict mode takes no map
		}
		a := agent(t, geminiProvider.open(t, s, geminiProvider.newer), items...)
		if _, err := a.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
		var req struct {
			Tools      json.RawMessage `json:"tools"`
			ToolConfig json.RawMessage `json:"toolConfig"`
		}
		if err := json.Unmarshal(s.Requests()[0].Raw, &req); err != nil {
			t.Fatal(err)
		}
		out.WriteString("== strict " + map[bool]string{false: "off", true: "on"}[strict] + "\n")
		_ = json.Indent(&out, req.Tools, "", "  ")
		out.WriteString("\ntoolConfig: " + string(req.ToolConfig) + "\n\n")
	}
	golden(t, "schemas.golden", out.Bytes())
}
