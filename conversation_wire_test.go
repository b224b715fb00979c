package onion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// TestConversationRequestsOnTheWire holds the bytes onion sends for two
// long conversations to what it sent before a conversation's runs shared
// its history instead of copying it (#28): every request body, in order,
// on Chat Completions, the Responses API and chained Responses, is
// compared with a golden file recorded by the code that copied. The
// conversations go through what rewrites a request: a history that strict
// templates refuse (a leading assistant message, two user turns in a
// row), a token budget's line on every request, the note after the cap on
// rounds, a prompt's images and a tool's, a run that fails, a typed answer
// with its corrective turn, a streamed run, and compactions (tool results
// left out, then summaries) with runs after them.
func TestConversationRequestsOnTheWire(t *testing.T) {
	for _, w := range []struct {
		name string
		opts []any
	}{
		{"chat", nil},
		{"responses", []any{onion.ResponsesAPI()}},
		{"chained", []any{onion.ResponsesAPI(), onion.ChainResponses()}},
	} {
		t.Run(w.name, func(t *testing.T) {
			var got bytes.Buffer
			for _, r := range budgetConversation(t, w.opts) {
				got.Write(r.Raw)
				got.WriteByte('\n')
			}
			got.WriteString("--- compaction\n")
			for _, r := range compactingConversation(t, w.opts) {
				got.Write(r.Raw)
				got.WriteByte('\n')
			}
			golden(t, "conversation_wire_"+w.name+".golden", got.Bytes())
		})
	}
}

// stockTools are the tools of the conversations: a read, a write, and a
// read that shows a picture.
func stockTools(t *testing.T) []any {
	t.Helper()
	dot, err := onion.ImageFile("testdata/dot.png")
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"sku":{"type":"string"}},"required":["sku"],"additionalProperties":false}`)
	lookup, err := onion.NewRawTool("lookup", schema, func(_ context.Context, args json.RawMessage) (any, error) {
		var a struct{ SKU string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return fmt.Sprintf("%s: %d in stock, shelf %s", a.SKU, len(a.SKU)*7, strings.Repeat(a.SKU, 12)), nil
	}, onion.Description("Looks a SKU up in the stock records."), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	restock, err := onion.NewRawTool("restock", schema, func(_ context.Context, args json.RawMessage) (any, error) {
		return "restock ordered: " + string(args), nil
	}, onion.Description("Orders a SKU restocked."))
	if err != nil {
		t.Fatal(err)
	}
	photo, err := onion.NewRawTool("photo", schema, func(ctx context.Context, args json.RawMessage) (any, error) {
		onion.ShowImages(ctx, dot)
		return "the shelf of " + string(args), nil
	}, onion.Description("Shows the shelf of a SKU."), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	return []any{lookup, restock, photo}
}

// stockAnswer is the typed answer AskIn asks for.
type stockAnswer struct {
	SKU   string `json:"sku"`
	Count int    `json:"count"`
}

// budgetConversation runs a conversation of eight prompts on an agent with
// a token budget, a cap of three rounds and KeepToolHistory, after a
// history strict templates refuse, and returns the requests it sent.
func budgetConversation(t *testing.T, opts []any) []oniontest.Request {
	t.Helper()
	s := oniontest.NewServer(t)
	items := append([]any{onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.Model("test-model"),
		onion.SystemPrompt("You keep the stock records."), onion.KeepToolHistory(), onion.TokenBudget(1_000_000),
		onion.MaxIterations(3), onion.Retries(0)}, opts...)
	a, err := onion.NewAgent("stock", append(items, stockTools(t)...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	conv := a.NewConversation()
	conv.SetHistory([]onion.Message{
		{Role: onion.RoleAssistant, Content: "Earlier: the shelves were counted on Monday."},
		{Role: onion.RoleUser, Content: "How many of A1 are left?"},
		{Role: onion.RoleUser, Content: "And of B2?"},
		{Role: onion.RoleAssistant, Content: "A1: 7, B2: 14."},
	})
	ctx := context.Background()
	run := func(prompt string, steps ...oniontest.Step) {
		t.Helper()
		s.Add(steps...)
		if _, err := conv.Run(ctx, prompt); err != nil {
			t.Fatalf("%q: %v", prompt, err)
		}
	}
	run("Check A1 and B2, and restock A1.",
		oniontest.ToolCalls(oniontest.Call("lookup", `{"sku":"A1"}`), oniontest.Call("lookup", `{"sku":"B2"}`)),
		oniontest.ToolCalls(oniontest.Call("restock", `{"sku":"A1"}`)),
		oniontest.Text("A1 restocked; B2 has 14."))
	dot, err := onion.ImageFile("testdata/dot.png")
	if err != nil {
		t.Fatal(err)
	}
	s.Add(oniontest.Text("A black dot."))
	if _, err := conv.Run(onion.WithImages(ctx, dot), "What is on this label?"); err != nil {
		t.Fatal(err)
	}
	run("Look up C3, D4, E5 and F6, one at a time.",
		oniontest.ToolCalls(oniontest.Call("lookup", `{"sku":"C3"}`)),
		oniontest.ToolCalls(oniontest.Call("lookup", `{"sku":"D4"}`)),
		oniontest.ToolCalls(oniontest.Call("lookup", `{"sku":"E5"}`)),
		oniontest.Text("C3, D4 and E5 are in stock; I did not get to F6."))
	s.Add(oniontest.Error(400, `{"error":{"message":"bad request","type":"invalid_request_error"}}`))
	if _, err := conv.Run(ctx, "This one fails."); err == nil {
		t.Fatal("the run the server refused succeeded")
	}
	s.Add(oniontest.Text(`{"sku":"A1","count":"many"}`), oniontest.Text(`{"sku":"A1","count":12}`))
	if v, _, err := onion.AskIn[stockAnswer](ctx, conv, "How many A1 now, as JSON?"); err != nil || v.Count != 12 {
		t.Fatalf("AskIn = %+v, %v", v, err)
	}
	s.Add(oniontest.ToolCalls(oniontest.Call("photo", `{"sku":"B2"}`)), oniontest.Text("The B2 shelf is full."))
	for _, err := range conv.Stream(ctx, "Show me the B2 shelf.") {
		if err != nil {
			t.Fatal(err)
		}
	}
	run("Thanks, that is all.", oniontest.Text("You are welcome."))
	return s.Requests()
}

// compactingConversation runs a conversation on an agent that compacts
// past 400 tokens, through tool results left out, summaries and runs
// after them, and returns the requests it sent.
func compactingConversation(t *testing.T, opts []any) []oniontest.Request {
	t.Helper()
	s := oniontest.NewServer(t)
	items := append([]any{onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.Model("test-model"),
		onion.SystemPrompt("You keep the stock records."), onion.KeepToolHistory(), onion.CompactAfter(400),
		onion.Retries(0)}, opts...)
	a, err := onion.NewAgent("stock", append(items, stockTools(t)...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	conv := a.NewConversation()
	ctx := context.Background()
	// The script of each run; a summary request, whenever compaction asks
	// for one, is answered on the side.
	var (
		mu        sync.Mutex // guards script and summaries
		script    []oniontest.Step
		summaries int
	)
	answer := func(r oniontest.Request) oniontest.Step {
		mu.Lock()
		defer mu.Unlock()
		if m := r.Body.Messages; len(m) > 0 && m[0].Content == loop.SummaryPrompt {
			summaries++
			return oniontest.Text(fmt.Sprintf("Summary %d: SKUs were looked up.", summaries))
		}
		next := script[0]
		script = script[1:]
		return next
	}
	for i, sku := range []string{"G7", "H8", "J9", "K10", "L11", "M12"} {
		mu.Lock()
		script = append(script, oniontest.ToolCalls(oniontest.Call("lookup", `{"sku":"`+sku+`"}`)),
			oniontest.ToolCalls(oniontest.Call("lookup", `{"sku":"`+sku+sku+`"}`)), oniontest.Text(sku+" is in stock."))
		mu.Unlock()
		for range 4 {
			s.Add(oniontest.Func(answer))
		}
		if _, err := conv.Run(ctx, "Look "+sku+" up, twice."); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if summaries == 0 {
		t.Fatal("no compaction asked for a summary")
	}
	return s.Requests()
}
