package onion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/onionkit/onion"
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

const (
	Low  Priority = "low"
	High Priority = "high"
)

// Level is how urgent a ticket is.
type Level int

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

type Audit struct {
	// CreatedBy names who made it.
	CreatedBy string `json:"created_by"`
}

// Order is everything the order tool takes.
type Order struct {
	Audit
	ID        uint              `json:"id"`
	Priority  Priority          `json:"priority"`
	Level     Level             `json:"level,omitempty"`
	Quantity  int               `json:"quantity" jsonschema:"minimum=1,maximum=99,default=1"`
	Code      string            `json:"code" jsonschema:"pattern=^[A-Z]{3}$"`
	Note      *string           `json:"note"`
	Tags      []string          `json:"tags,omitempty" doc:"free labels"`
	Ship      Address           `json:"ship"`
	Due       time.Time         `json:"due"`
	Wait      time.Duration     `json:"wait,omitempty"`
	Extra     map[string]string `json:"extra,omitempty"`
	Raw       json.RawMessage   `json:"raw,omitempty"`
	Anything  any               `json:"anything,omitempty"`
	Ignored   string            `json:"-"`
	unexposed string            //lint:ignore U1000 unexported fields must not become parameters
}

// PlaceOrder places an order.
//
// It is not sent: only the first paragraph is.
//
//onion:intent write
//onion:idempotent
func PlaceOrder(ctx context.Context, o Order) (Order, error) { return o, nil }

// Strictish has only fields strict mode can express.
type Strictish struct {
	Name  string  `json:"name"`
	Count *int    `json:"count"`
	Nick  string  `json:"nick,omitempty"`
	Ship  Address `json:"ship"`
}

// Booking has keywords strict mode refuses.
type Booking struct {
	Seats int    `json:"seats" jsonschema:"default=1,minimum=1"`
	Note  string `json:"note,omitempty" jsonschema:"maxLength=20"`
}

// Book books seats.
func Book(b Booking) (Booking, error) { return b, nil }

// Register registers a name.
func Register(s Strictish) error { return nil }

// Color is a color in hex, with its own schema.
type Color string

// JSONSchema defines Color's schema.
func (Color) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: "^#[0-9a-f]{6}$", Description: "a color such as #ff8800"}
}

// Paint paints the wall.
//
// color: the paint
func Paint(color Color) error { return nil }

// Greet says hello to someone.
//
// - name: who to greet
// - times: how often
//
//onion:intent read
func Greet(name string, times *int, p Priority) string { return "hi " + name }

// NoParams takes nothing.
func NoParams() {}

func Undocumented(x int) int { return x }

// GetHTTPStatus fetches a status.
func GetHTTPStatus(code uint8) (string, error) { return "", nil }

// Variadic cannot be a tool.
func Variadic(xs ...int) {}

// Chan takes a channel.
func Chan(c struct {
	C chan int `json:"c"`
}) {
}

// Recursive is a tree.
type Recursive struct {
	Kids []Recursive `json:"kids"`
}

// UseRecursive takes a tree.
func UseRecursive(r Recursive) {}

// WrongResults returns two values.
func WrongResults() (int, int) { return 0, 0 }

// UnknownDirective has a typo.
//
//onion:intnet read
func UnknownDirective() {}

type store struct {
	sync.Mutex
	items []string
}

// Put stores an item.
//
// item: what to store
func (s *store) Put(item string) int { s.items = append(s.items, item); return len(s.items) }

// Items lists the items.
//
//onion:intent read
func (s *store) Items() []string { return s.items }

// Close is not a tool.
func (s *store) Close() error { return nil }

// String is not a tool.
func (s *store) String() string { return "store" }

func describeTools(items ...any) string {
	var b strings.Builder
	for _, item := range items {
		tools, err := onion.ToolsFrom(item)
		if err != nil {
			fmt.Fprintf(&b, "== %T\nerror: %v\n\n", item, err)
			continue
		}
		for _, t := range tools {
			var schema bytes.Buffer
			json.Indent(&schema, t.Schema(), "", "  ")
			fmt.Fprintf(&b, "== %s\nintent: %s, idempotent: %v\nsignature: %s\ndescription: %s\nschema: %s\n\n",
				t.Name(), t.Intent(), t.Idempotent(), t.Signature(), t.Description(), schema.String())
		}
	}
	return b.String()
}

func TestSchemasGolden(t *testing.T) {
	got := describeTools(PlaceOrder, Greet, Paint, NoParams, GetHTTPStatus, Register, &store{},
		Undocumented, Variadic, Chan, UseRecursive, WrongResults, UnknownDirective,
		func(struct{}) {}, 42, nil, store{}, &struct{}{})
	golden(t, "schemas.golden", []byte(got))
}

func TestStrictGolden(t *testing.T) {
	var b strings.Builder
	for _, fn := range []any{Register, Greet, NoParams, Book, PlaceOrder} {
		a, err := onion.NewAgent("strict", fn, onion.Strict())
		if err != nil {
			fmt.Fprintf(&b, "== %T\nerror: %v\n\n", fn, err)
			continue
		}
		for _, tool := range a.Tools().All() {
			def, _ := json.MarshalIndent(a.Definitions()[0], "", "  ")
			fmt.Fprintf(&b, "== %s\n%s\n\n", tool.Name(), def)
		}
	}
	golden(t, "strict.golden", []byte(b.String()))
}

func TestArgumentErrorsGolden(t *testing.T) {
	order, err := onion.NewTool(PlaceOrder)
	if err != nil {
		t.Fatal(err)
	}
	greet, err := onion.NewTool(Greet)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, tc := range []struct {
		tool *onion.Tool
		args string
	}{
		{greet, `{"name":"Ann","p":"low"}`},
		{greet, ``},
		{greet, `{"name":5,"times":"x","p":"urgent","other":1}`},
		{greet, `{"name":"Ann","times":null,"p":"high"}`},
		{greet, `{"name":"Ann", "p": "low"`},
		{greet, `[1,2]`},
		{greet, `{"name":"A\u00e9\ud83d\ude00","p":"low"}`},
		{order, `{"created_by":"me","id":7,"priority":"low","code":"ABC","ship":{"street":"1 Main","city":"X"},"due":"2026-11-30T10:00:00Z","wait":"90s","level":2}`},
		{order, `{"created_by":"me","id":-1,"priority":"low","quantity":100,"code":"abc","ship":{"street":"1 Main"},"due":"yesterday","wait":"soon","level":7}`},
		{order, `{}`},
	} {
		out, err := tc.tool.Call(context.Background(), tc.args)
		fmt.Fprintf(&b, "== %s %s\n", tc.tool.Name(), tc.args)
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n\n", err)
		} else {
			fmt.Fprintf(&b, "result: %s\n\n", out)
		}
	}
	golden(t, "arguments.golden", []byte(b.String()))
}

func TestDescribeTools(t *testing.T) {
	a, err := onion.NewAgent("d", Greet, &store{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, info := range a.DescribeTools() {
		got = append(got, info.Signature+" — "+info.Description)
	}
	// A struct's methods come in the order reflect lists them: by name.
	want := "greet(name string, times *int, p Priority) string — Says hello to someone.|items() []string — Lists the items.|put(item string) int — Stores an item."
	if strings.Join(got, "|") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, "|"), want)
	}
}

func TestInstanceSharesState(t *testing.T) {
	s := &store{}
	a, err := onion.NewAgent("s", s)
	if err != nil {
		t.Fatal(err)
	}
	put, _ := a.Tools().Get("put")
	items, _ := a.Tools().Get("items")
	for _, item := range []string{"a", "b"} {
		if _, err := put.Call(context.Background(), `{"item":"`+item+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	out, err := items.Run(context.Background(), nil)
	if err != nil || fmt.Sprint(out) != "[a b]" || strings.Join(s.items, ",") != "a,b" {
		t.Errorf("items = %v, err %v", out, err)
	}
	if _, ok := a.Tools().Get("lock"); ok {
		t.Error("the embedded mutex's Lock became a tool")
	}
	if got := strings.Join(a.Tools().Names(), ","); got != "items,put" && got != "put,items" {
		t.Errorf("names = %s", got)
	}
}

func TestBoundMethodValue(t *testing.T) {
	s := &store{}
	tool, err := onion.NewTool(s.Put)
	if err != nil {
		t.Fatal(err)
	}
	if tool.Name() != "put" || tool.Description() != "Stores an item." {
		t.Errorf("name %q, description %q", tool.Name(), tool.Description())
	}
	if out, err := tool.Call(context.Background(), `{"item":"x"}`); err != nil || out != "1" {
		t.Errorf("out %q, err %v", out, err)
	}
}

func TestDuplicateNames(t *testing.T) {
	other, _ := onion.NewTool(NoParams, onion.Name("greet"))
	_, err := onion.NewAgent("dup", Greet, other)
	if err == nil || !strings.Contains(err.Error(), `two tools are named "greet"`) || !strings.Contains(err.Error(), "Greet") || !strings.Contains(err.Error(), "NoParams") {
		t.Errorf("err = %v", err)
	}
}

func TestRunReturnsTheGoValue(t *testing.T) {
	tool, _ := onion.NewTool(PlaceOrder)
	out, err := tool.Run(context.Background(), map[string]any{
		"created_by": "me", "id": 1, "priority": "high", "code": "ABC",
		"ship": map[string]any{"street": "s", "city": "c"}, "due": "2026-01-02T03:04:05Z",
	})
	o, ok := out.(Order)
	if err != nil || !ok || o.Quantity != 1 || o.Priority != High || o.Ship.City != "c" {
		t.Errorf("out %+v, err %v", out, err)
	}
}

func TestMalformedTagNamesTheField(t *testing.T) {
	// Built at run time: go vet rightly refuses the tag in source.
	bad := reflect.StructOf([]reflect.StructField{{Name: "A", Type: reflect.TypeFor[string](), Tag: `json:"a" doc:"oops`}})
	fn := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{bad}, nil, false), func([]reflect.Value) []reflect.Value { return nil })
	_, err := onion.NewTool(fn.Interface(), onion.Name("bad_tag"))
	if err == nil || !strings.Contains(err.Error(), "field A") || !strings.Contains(err.Error(), "malformed struct tag") {
		t.Errorf("err = %v", err)
	}
}

func TestOutputSchema(t *testing.T) {
	for _, tc := range []struct {
		fn   any
		want string
	}{
		{PlaceOrder, `"type":"object"`},
		{Greet, `{"type":"string"}`},
		{NoParams, ``},
		{GetHTTPStatus, `{"type":"string"}`},
	} {
		tool, err := onion.NewTool(tc.fn)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tool.OutputSchema()
		if err != nil || !strings.Contains(string(got), tc.want) || (tc.want == "") != (got == nil) {
			t.Errorf("%s: output schema %s, err %v; want %s", tool.Name(), got, err, tc.want)
		}
	}
}

func TestNoSourceNoNames(t *testing.T) {
	// A func made at run time has no source: its parameters have no names.
	fn := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[int]()}, nil, false),
		func([]reflect.Value) []reflect.Value { return nil })
	_, err := onion.NewTool(fn.Interface(), onion.Name("made"))
	if err == nil || !strings.Contains(err.Error(), "cmd/oniondoc") || !strings.Contains(err.Error(), "struct argument") {
		t.Errorf("err = %v", err)
	}
}

// TestMadeFuncsKeepTheirTypes makes tools of two funcs made at run time:
// reflect.MakeFunc gives every such func the same code pointer, and each
// tool must still take its own arguments.
func TestMadeFuncsKeepTheirTypes(t *testing.T) {
	type first struct{ A string }
	type second struct{ B int }
	for _, typ := range []reflect.Type{reflect.TypeFor[first](), reflect.TypeFor[second]()} {
		fn := reflect.MakeFunc(reflect.FuncOf([]reflect.Type{typ}, nil, false), func([]reflect.Value) []reflect.Value { return nil })
		tool, err := onion.NewTool(fn.Interface(), onion.Name("made"), onion.Description("Made."), onion.Read, onion.NoApproval())
		if err != nil {
			t.Fatal(err)
		}
		field := typ.Field(0).Name
		if schema := string(tool.Schema()); !strings.Contains(schema, `"`+field+`"`) {
			t.Errorf("the tool of a func taking %s has the schema %s, want its field %s", typ, schema, field)
		}
	}
}

func TestPaintValidatesCustomSchema(t *testing.T) {
	paint, err := onion.NewTool(Paint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := paint.Call(context.Background(), `{"color":"#ff8800"}`); err != nil {
		t.Errorf("a good color was refused: %v", err)
	}
	if _, err := paint.Call(context.Background(), `{"color":"orange"}`); err == nil || !strings.Contains(err.Error(), `matching "^#[0-9a-f]{6}$"`) {
		t.Errorf("a bad color was not refused by its own schema: %v", err)
	}
}

// closingStore counts its closes.
type closingStore struct{ closed int }

// Get returns how often Close ran.
func (c *closingStore) Get() int { return c.closed }

// Put does nothing.
func (c *closingStore) Put() {}

func (c *closingStore) Close() error { c.closed++; return nil }

func TestAgentCloseClosesEachInstanceOnce(t *testing.T) {
	c := &closingStore{}
	a, err := onion.NewAgent("c", c)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a.Tools().Names(), ","); got != "get,put" {
		t.Errorf("tools = %s; Close must not be one", got)
	}
	if err := a.Close(); err != nil || c.closed != 1 {
		t.Errorf("Close: %v, instance closed %d times", err, c.closed)
	}
}

func TestToolNameRules(t *testing.T) {
	for name, ok := range map[string]bool{"ok_name-1": true, "has space": false, "": false, strings.Repeat("x", 65): false, "dot.name": false} {
		_, err := onion.NewTool(NoParams, onion.Name(name))
		if (err == nil) != ok || err != nil && !strings.Contains(err.Error(), "must match") {
			t.Errorf("name %q: err = %v", name, err)
		}
	}
}

func TestStrictKeepsGoChecks(t *testing.T) {
	a, err := onion.NewAgent("strict", Book, onion.Strict())
	if err != nil {
		t.Fatal(err)
	}
	book, _ := a.Tools().Get("book")
	// Strict models send null for optional fields: the default applies.
	out, err := book.Call(context.Background(), `{"seats":null,"note":null}`)
	if err != nil || out != `{"seats":1}` {
		t.Errorf("out %s, err %v", out, err)
	}
	// maxLength is not sent in strict mode but still checked.
	if _, err := book.Call(context.Background(), `{"seats":2,"note":"far too long for the note field"}`); err == nil {
		t.Error("a note over maxLength was accepted")
	}
}
