package devserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// Stock is how much of a SKU is left.
type Stock struct {
	SKU   string `json:"sku"`
	Count int    `json:"count" jsonschema:"minimum=0"`
	Level Level  `json:"level"`
}

// Level says whether to order more.
type Level string

// The levels of stock.
const (
	Plenty Level = "plenty"
	Low    Level = "low"
)

// TestAskOnServer: a typed durable run on the embedded server with a real
// worker: a tool call, an answer that does not fit, the corrective turn,
// and the answer decoded on the client; every request asks for the
// answer's schema as structured output.
func TestAskOnServer(t *testing.T) {
	_, model, c := crashSetup(t,
		oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)),
		oniontest.Text(`{"sku":"A1","count":-3,"level":"some"}`),
		oniontest.Text(`{"sku":"A1","count":3,"level":"low"}`),
		oniontest.Text(`It is low.`), oniontest.Text(`Still low.`))
	serveAgent(t, c, model, "ask", func(ctx context.Context, tool string) (string, error) { return "3", nil })

	ctx := context.Background()
	s, res, err := temporal.Ask[Stock](ctx, c, "ask", testagent.Name, "How many A1?", temporal.WorkflowID("ask-1"))
	if err != nil {
		t.Fatal(err)
	}
	if s != (Stock{SKU: "A1", Count: 3, Level: Low}) || len(res.ToolCalls) != 1 || res.Iterations != 1 {
		t.Fatalf("answer %+v, result %+v", s, res)
	}
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want the call, the answer and the corrective turn", len(reqs))
	}
	for i, r := range reqs {
		var body struct {
			ResponseFormat struct {
				Type       string `json:"type"`
				JSONSchema struct {
					Name   string          `json:"name"`
					Desc   string          `json:"description"`
					Strict bool            `json:"strict"`
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal(r.Raw, &body); err != nil {
			t.Fatal(err)
		}
		rf := body.ResponseFormat
		// The doc comment and the enum constants are read from this
		// package's source, although the temporal package derives them.
		if rf.Type != "json_schema" || rf.JSONSchema.Name != "stock" || !rf.JSONSchema.Strict || !strings.Contains(string(rf.JSONSchema.Schema), `"plenty"`) ||
			rf.JSONSchema.Desc != "Stock is how much of a SKU is left." {
			t.Errorf("request %d: response_format %+v", i, rf)
		}
	}
	msgs := reqs[2].Body.Messages
	if fix := msgs[len(msgs)-1].Content; !strings.Contains(fix, "count") || !strings.Contains(fix, "level") || !strings.Contains(fix, `"some"`) {
		t.Errorf("corrective turn %q does not name every problem", fix)
	}
	saveHistory(t, c, "ask-1", "typed-answer")

	// An answer that never fits, through the Start and ResultAs split.
	run, err := temporal.Start(ctx, c, "ask", testagent.Name, "And now?", temporal.Answer[Stock](), temporal.WorkflowID("ask-2"))
	if err != nil {
		t.Fatal(err)
	}
	_, res, err = temporal.ResultAs[Stock](ctx, run)
	var ae *onion.AnswerError
	if !errors.As(err, &ae) || ae.Raw != "Still low." || ae.Type != "devserver_test.Stock" || res == nil || res.Output != "Still low." {
		t.Fatalf("err %v, result %+v; want an *onion.AnswerError with the raw answer", err, res)
	}
}

// TestAskInOnServer: a typed durable run in an onion.Conversation adds
// its turn when the answer fits, and nothing when it never does.
func TestAskInOnServer(t *testing.T) {
	_, model, c := crashSetup(t,
		oniontest.Text(`{"sku":"A1","count":3,"level":"low"}`),
		oniontest.Text(`plenty`), oniontest.Text(`plenty!`))
	agent := serveAgent(t, c, model, "askin", func(ctx context.Context, tool string) (string, error) { return "3", nil })

	ctx := context.Background()
	conv := agent.NewConversation()
	s, _, err := temporal.AskIn[Stock](ctx, c, "askin", conv, "How many A1?", temporal.WorkflowID("askin-1"))
	if err != nil || s.Count != 3 {
		t.Fatalf("answer %+v, err %v", s, err)
	}
	if h := conv.History(); len(h) != 2 || h[0].Content != "How many A1?" || h[1].Content != `{"sku":"A1","count":3,"level":"low"}` {
		t.Fatalf("after the first run: %+v", h)
	}
	_, _, err = temporal.AskIn[Stock](ctx, c, "askin", conv, "And A2?", temporal.WorkflowID("askin-2"))
	var ae *onion.AnswerError
	if !errors.As(err, &ae) || ae.Raw != "plenty!" {
		t.Fatalf("err %v, want an *onion.AnswerError", err)
	}
	if h := conv.History(); len(h) != 2 {
		t.Errorf("an answer that never fit added its turn: %d messages", len(h))
	}
	// The second run continued the first's conversation.
	if reqs := model.Requests(); len(reqs) != 3 || len(reqs[1].Body.Messages) != 4 {
		t.Errorf("%d requests; the second sent %d messages, want system, the first turn and the prompt", len(reqs), len(reqs[1].Body.Messages))
	}
}
