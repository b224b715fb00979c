package onion_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/srcdoc"
)

// Repayment is what refundByPointer takes.
type Repayment struct {
	// Order is the order to pay back.
	Order  string `json:"order"`
	Amount int    `json:"amount,omitempty"`
}

// refundByPointer pays an order back.
//
//onion:intent delete
//onion:approve
func refundByPointer(ctx context.Context, r *Repayment) (string, error) {
	return r.Order + ":" + strings.Repeat("$", r.Amount), nil
}

// TestPointerArgument makes a tool of func(ctx, *Args): its schema is the
// struct's, and the func gets a non-nil pointer, even for no arguments.
func TestPointerArgument(t *testing.T) {
	a, err := onion.NewAgent("refunds", refundByPointer)
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := a.Tools().Get("refund_by_pointer")
	if !strings.Contains(string(tool.Schema()), `"order":{"type":"string","description":"Order is the order to pay back."}`) {
		t.Errorf("schema %s", tool.Schema())
	}
	if tool.Intent() != onion.Delete || !tool.NeedsApproval(context.Background(), onion.Call{}) {
		t.Errorf("intent %s, approval %v", tool.Intent(), tool.NeedsApproval(context.Background(), onion.Call{}))
	}
	if out, err := tool.Call(context.Background(), `{"order":"A1","amount":2}`); err != nil || out != "A1:$$" {
		t.Errorf("Call = %q, %v", out, err)
	}
	if _, err := tool.Call(context.Background(), `{}`); !errors.Is(err, onion.ErrInvalidArguments) {
		t.Errorf("Call({}) err = %v, want the missing order reported", err)
	}
	if got, want := tool.Signature(), "refund_by_pointer(r *Repayment) string"; got != want {
		t.Errorf("Signature = %q, want %q", got, want)
	}
	// A pointer to a struct of optional fields: {} still gives a pointer.
	type optional struct {
		N *int `json:"n"`
	}
	var got *optional
	opt, err := onion.NewTool(func(ctx context.Context, o *optional) error { got = o; return nil }, onion.Name("opt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := opt.Call(context.Background(), ``); err != nil || got == nil {
		t.Errorf("Call(\"\") gave %v, err %v; want a non-nil pointer", got, err)
	}
}

// noSourceFunc is a func made at run time: it has no source, like a func of
// a binary built with -trimpath and run without generated facts.
func noSourceFunc() any {
	ft := reflect.FuncOf([]reflect.Type{reflect.TypeFor[context.Context](), reflect.TypeFor[Repayment]()}, []reflect.Type{reflect.TypeFor[error]()}, false)
	return reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value {
		return []reflect.Value{reflect.Zero(reflect.TypeFor[error]())}
	}).Interface()
}

// TestNoDocNeedsOptions: a struct-argument func whose doc comment cannot
// be read is refused, naming both fixes and what the options lack, unless
// its options say its description, intent and approval.
func TestNoDocNeedsOptions(t *testing.T) {
	fn := noSourceFunc()
	for _, tc := range []struct {
		opts []onion.ToolOption
		lack []string
	}{
		{[]onion.ToolOption{onion.Name("refund")}, []string{"onion.Description", "an intent", "onion.RequireApproval, onion.ApproveIf or onion.NoApproval"}},
		{[]onion.ToolOption{onion.Name("refund"), onion.Description("Refund pays back."), onion.Delete}, []string{"onion.NoApproval"}},
		{[]onion.ToolOption{onion.Name("refund"), onion.Delete, onion.RequireApproval()}, []string{"onion.Description"}},
	} {
		_, err := onion.NewTool(fn, tc.opts...)
		if err == nil {
			t.Errorf("%d options: no error", len(tc.opts))
			continue
		}
		msg := err.Error()
		for _, want := range append(tc.lack, "doc comment cannot be read", "cmd/oniondoc", "go:generate") {
			if !strings.Contains(msg, want) {
				t.Errorf("%d options: err = %v\nwant it to contain %q", len(tc.opts), err, want)
			}
		}
		if len(tc.lack) == 1 && strings.Contains(msg, "an intent") {
			t.Errorf("err names what is given: %v", err)
		}
	}
	for _, approval := range []onion.ToolOption{onion.RequireApproval(), onion.NoApproval(),
		onion.ApproveIf(func(context.Context, onion.Call) (bool, error) { return true, nil })} {
		tool, err := onion.NewTool(fn, onion.Name("refund"), onion.Description("Refund pays back."), onion.Delete, approval)
		if err != nil {
			t.Fatalf("all said: %v", err)
		}
		if tool.Description() != "Refund pays back." || tool.Intent() != onion.Delete {
			t.Errorf("description %q, intent %s", tool.Description(), tool.Intent())
		}
	}
	// Options override the doc comment, NoApproval its //onion:approve.
	if tool, err := onion.NewTool(refundByPointer, onion.NoApproval()); err != nil || tool.NeedsApproval(context.Background(), onion.Call{}) {
		t.Errorf("NoApproval over //onion:approve: %v", err)
	}
	// A func literal has no doc comment to lose: its name is enough.
	if _, err := onion.NewTool(func(ctx context.Context, r Repayment) error { return nil }, onion.Name("lit")); err != nil {
		t.Errorf("func literal: %v", err)
	}
}

// staleDoc's doc comment was edited after the facts registered in
// TestSourceWinsOverStaleFacts were generated.
//
//onion:intent read
func staleDoc(ctx context.Context, r Repayment) error { return nil }

// TestSourceWinsOverStaleFacts registers generated facts that say
// otherwise than the source at hand: the source wins.
func TestSourceWinsOverStaleFacts(t *testing.T) {
	srcdoc.Register(srcdoc.Package{
		Path:  "github.com/onionkit/onion_test",
		Funcs: []srcdoc.Func{{Name: "staleDoc", Doc: []string{"Stale text.", "", "onion:approve"}, Params: []string{"ctx", "r"}}},
		Types: []srcdoc.Type{{Name: "Refund", Fields: []srcdoc.Field{{Name: "Order", Doc: []string{"stale field doc"}}}}},
	})
	tool, err := onion.NewTool(staleDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tool.Description(), "staleDoc's doc comment was edited") || tool.Intent() != onion.Read ||
		tool.NeedsApproval(context.Background(), onion.Call{}) {
		t.Errorf("description %q, intent %s, approval %v: the stale facts won", tool.Description(), tool.Intent(), tool.NeedsApproval(context.Background(), onion.Call{}))
	}
	if strings.Contains(string(tool.Schema()), "stale") {
		t.Errorf("schema %s holds the stale field doc", tool.Schema())
	}
}

// Shelf is a struct instance whose methods are tools.
type Shelf struct{ items []string }

// Add puts an item on the shelf.
func (s *Shelf) Add(item string) int { s.items = append(s.items, item); return len(s.items) }

// Remove takes an item off the shelf.
func (s *Shelf) Remove(item string) error { return nil }

// TestMethodOption gives one method an option without touching its doc.
func TestMethodOption(t *testing.T) {
	tools, err := onion.ToolsFrom(&Shelf{}, onion.Method("Remove", onion.RequireApproval(), onion.Delete), onion.Idempotent())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tool := range tools {
		remove := tool.Name() == "remove"
		if tool.NeedsApproval(ctx, onion.Call{}) != remove || (tool.Intent() == onion.Delete) != remove || !tool.Idempotent() {
			t.Errorf("%s: approval %v, intent %s, idempotent %v", tool.Name(), tool.NeedsApproval(ctx, onion.Call{}), tool.Intent(), tool.Idempotent())
		}
	}
	if _, err := onion.NewAgent("shelf", tools); err != nil {
		t.Errorf("NewAgent: %v", err)
	}
	_, err = onion.ToolsFrom(&Shelf{}, onion.Method("Delete", onion.RequireApproval()))
	if err == nil || !strings.Contains(err.Error(), `onion.Method("Delete")`) || !strings.Contains(err.Error(), "Add, Remove") {
		t.Errorf("unknown method: err = %v", err)
	}
	// Given to NewAgent, Method works too: TestMethodGivenToNewAgent.
	s := &Shelf{}
	tool, err := onion.NewTool(s.Remove, onion.Method("Remove", onion.RequireApproval()))
	if err != nil || !tool.NeedsApproval(ctx, onion.Call{}) {
		t.Errorf("bound method value: %v", err)
	}
	if _, err := onion.NewTool(s.Add, onion.Method("Remove", onion.RequireApproval())); err == nil || !strings.Contains(err.Error(), `onion.Method("Remove")`) {
		t.Errorf("another method's option: err = %v", err)
	}
}

// TestPassedTwice names the mistake: the same value twice is not two tools
// that happen to share a name.
func TestPassedTwice(t *testing.T) {
	s := &Shelf{}
	tool, _ := onion.NewTool(Greet)
	for name, items := range map[string][]any{
		"instance": {s, s},
		"func":     {Greet, Greet},
		"tool":     {tool, tool},
		"made":     {tool, Greet},
	} {
		_, err := onion.NewAgent("twice", items...)
		if err == nil || !strings.Contains(err.Error(), "passed twice") || strings.Contains(err.Error(), "rename") {
			t.Errorf("%s: err = %v, want \"passed twice\"", name, err)
		}
	}
	_, err := onion.NewAgent("two", s, &Shelf{})
	if err == nil || !strings.Contains(err.Error(), `two tools are named "add"`) {
		t.Errorf("two instances: err = %v", err)
	}
}

// TestEnumsOfTestTypes finds the enums of types declared in _test.go files,
// in the package or in the test function itself.
func TestEnumsOfTestTypes(t *testing.T) {
	// Mood is how a customer feels.
	type Mood string
	const (
		Calm  Mood = "calm"
		Angry Mood = "angry"
	)
	type complaint struct {
		Mood     Mood     `json:"mood"`
		Priority Priority `json:"priority"`
	}
	tool, err := onion.NewTool(func(ctx context.Context, c complaint) error { return nil }, onion.Name("complain"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"mood":{"type":"string","enum":["` + string(Calm) + `","` + string(Angry) + `"]}`, `"enum":["low","high"]`} {
		if !strings.Contains(string(tool.Schema()), want) {
			t.Errorf("schema %s\nwant %s", tool.Schema(), want)
		}
	}
}

// TestParamNamesForAFuncLiteral: a func literal's positional parameters
// have no names the source gives, so ParamNames gives them; without it the
// error says exactly that, and names that cannot be parameters' are
// refused.
func TestParamNamesForAFuncLiteral(t *testing.T) {
	forecast := func(city string, days int) string { return fmt.Sprintf("%s for %d days", city, days) }
	tool, err := onion.NewTool(forecast, onion.Name("forecast"), onion.ParamNames("city", "days"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(tool.Schema()); !strings.Contains(s, `"city":{"type":"string"}`) || !strings.Contains(s, `"days":{"type":"integer"}`) {
		t.Errorf("schema %s", s)
	}
	if out, err := tool.Call(context.Background(), `{"city":"Paris","days":3}`); err != nil || out != "Paris for 3 days" {
		t.Errorf("call = %q, %v", out, err)
	}
	// With a context first, and with every option a doc comment would give.
	withCtx := func(ctx context.Context, q string) (string, error) { return q, nil }
	if _, err := onion.NewTool(withCtx, onion.Name("search"), onion.Description("Searches."), onion.Read, onion.NoApproval(), onion.ParamNames("q")); err != nil {
		t.Errorf("with a context: %v", err)
	}
	for _, c := range []struct {
		opts []onion.ToolOption
		want string
	}{
		{[]onion.ToolOption{onion.Name("forecast")}, "the names of its parameters (string, int) are unknown, as a func literal's are: give them with onion.ParamNames"},
		{[]onion.ToolOption{onion.Name("forecast"), onion.ParamNames("city")}, "onion.ParamNames gives 1 names, for string, int"},
		{[]onion.ToolOption{onion.Name("forecast"), onion.ParamNames("city", `x" doc:"y`)}, `is not a name a parameter can have`},
		{[]onion.ToolOption{onion.Name("forecast"), onion.ParamNames("city", "city")}, `"city" is not a name a parameter can have`},
	} {
		if _, err := onion.NewTool(forecast, c.opts...); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "oniondoc") {
			t.Errorf("err = %v\nwant it to say %q, and not to send the user to oniondoc", err, c.want)
		}
	}
}

// SearchMisdocumented finds pages.
//
// query: the words to look for
func SearchMisdocumented(q string) string { return q }

// SearchTypo finds pages.
//
// q: the words to look for
// limt: at most this many
func SearchTypo(q string, limit int) string { return q }

// SearchNoted finds pages.
//
// q: the words to look for
//
// Note: results are cached for an hour.
func SearchNoted(q string) string { return q }

// TestDocLineForNoParameter: a doc line that describes a parameter the
// func does not have (a renamed one, a typo) is refused, naming the
// parameters there are; a capitalised label ("Note:") is not a parameter.
func TestDocLineForNoParameter(t *testing.T) {
	for _, c := range []struct {
		fn   any
		want string
	}{
		{SearchMisdocumented, `doc comment line "query: the words to look for" describes no parameter: the parameters are q`},
		{SearchTypo, `doc comment line "limt: at most this many" describes no parameter: the parameters are q, limit`},
	} {
		if _, err := onion.NewTool(c.fn); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v\nwant it to say %q", err, c.want)
		}
	}
	if tool, err := onion.NewTool(SearchNoted); err != nil || tool.Description() != "Finds pages." {
		t.Errorf("a Note paragraph: %v", err)
	}
}
