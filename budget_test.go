package onion_test

import (
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// lastMessage is the text of the last message of request n.
func lastMessage(t *testing.T, s *oniontest.Server, n int) string {
	t.Helper()
	msgs := s.Requests()[n].Body.Messages
	if len(msgs) == 0 {
		t.Fatalf("request %d has no messages", n)
	}
	return msgs[len(msgs)-1].Content
}

func TestTokenBudgetLine(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)).WithUsage(100, 20),
				oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"b"}`)).WithUsage(140, 20),
				oniontest.Text("done").WithUsage(180, 5),
			)
			a := newAgent(t, s, append([]any{Lookup, onion.TokenBudget(10000)}, w.opts...)...)
			res, err := a.Run(context.Background(), "go")
			if err != nil || res.StopReason != onion.StopNatural {
				t.Fatalf("result %+v, err %v", res, err)
			}
			for i, want := range []string{
				"go\n\nToken budget: 10000 of 10000 tokens left.",        // the line ends the prompt
				"value of a\n\nToken budget: 9880 of 10000 tokens left.", // and the last tool result,
				"value of b\n\nToken budget: 9720 of 10000 tokens left.", // as strict templates want
			} {
				if got := lastMessage(t, s, i); got != want {
					t.Errorf("request %d ends with %q, want %q", i, got, want)
				}
			}
			want := onion.Usage{PromptTokens: 420, CompletionTokens: 45, TotalTokens: 465, Requests: 3}
			if res.Usage != want {
				t.Errorf("usage %+v, want the sums %+v", res.Usage, want)
			}
			// The line is not kept: each request but the last message is
			// the previous request and its reply, for the prompt cache.
			second, third := s.Requests()[1].Body.Messages, s.Requests()[2].Body.Messages
			for i := range len(second) - 1 {
				if second[i].Content != third[i].Content || second[i].Role != third[i].Role {
					t.Errorf("message %d changed between requests: %q, then %q", i, second[i].Content, third[i].Content)
				}
			}
			if third[1].Content != "go" {
				t.Errorf("the prompt was sent again as %q", third[1].Content)
			}
		})
	}
}

func TestTokenBudgetStopsTools(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)).WithUsage(300, 40),
				oniontest.Text("from what I have").WithUsage(400, 10),
			)
			// 1000 left 660 after the first round: another round (~390)
			// and a final request after it (~430) would not both fit.
			a := newAgent(t, s, append([]any{Lookup, onion.TokenBudget(1000)}, w.opts...)...)
			res, err := a.Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			if res.StopReason != onion.StopBudget || res.Output != "from what I have" {
				t.Errorf("stop %s, output %q; want budget", res.StopReason, res.Output)
			}
			if n := len(s.Requests()); n != 2 {
				t.Fatalf("%d requests", n)
			}
			last := s.Requests()[1]
			if strings.Contains(string(last.Raw), `"tools"`) {
				t.Errorf("the final request offers tools: %s", last.Raw)
			}
			msgs := last.Body.Messages
			if got := msgs[len(msgs)-1].Content; got != "value of a\n\n"+loop.BudgetNote+"\n\nToken budget: 660 of 1000 tokens left." {
				t.Errorf("last message %q, want the budget note and line", got)
			}
			if want := (onion.Usage{PromptTokens: 700, CompletionTokens: 50, TotalTokens: 750, Requests: 2}); res.Usage != want {
				t.Errorf("usage %+v, want %+v", res.Usage, want)
			}
		})
	}
}

func TestTokenBudgetNoRoomForAnotherRequest(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)).WithUsage(450, 30))
	res, err := newAgent(t, s, Lookup, onion.TokenBudget(500)).Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != onion.StopBudget || !strings.Contains(res.Output, "token budget of 500 tokens") || len(s.Requests()) != 1 {
		t.Errorf("stop %s, output %q, %d requests", res.StopReason, res.Output, len(s.Requests()))
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded || res.Usage.TotalTokens != 480 {
		t.Errorf("calls %+v, usage %+v", res.ToolCalls, res.Usage)
	}
}

func TestTokenBudgetHooksReadRunUsage(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)).WithUsage(100, 10),
		oniontest.Text("ok").WithUsage(130, 5),
	)
	var before, after []int
	var tool []int
	hooks := onion.Hooks{
		BeforeModel: func(ctx context.Context, e onion.ModelEvent) error {
			before = append(before, e.RunUsage.TotalTokens)
			return nil
		},
		AfterModel: func(ctx context.Context, e onion.ModelEvent) error {
			after = append(after, e.RunUsage.TotalTokens)
			return nil
		},
		AfterTool: func(ctx context.Context, e onion.ToolEvent) error {
			tool = append(tool, e.RunUsage.TotalTokens)
			return nil
		},
	}
	if _, err := newAgent(t, s, Lookup, onion.TokenBudget(5000), hooks).Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if got := [][]int{before, after, tool}; len(before) != 2 || before[0] != 0 || before[1] != 110 ||
		len(after) != 2 || after[0] != 110 || after[1] != 245 || len(tool) != 1 || tool[0] != 110 {
		t.Errorf("running usage before, after each request and after the call: %v", got)
	}
}

func TestTokenBudgetWithAsk(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)).WithUsage(300, 40),
		oniontest.Text(`{"answer":"cloudy"}`).WithUsage(400, 10),
	)
	sky, res, err := onion.Ask[Sky](context.Background(), newAgent(t, s, Lookup, onion.TokenBudget(1000)), "go")
	if err != nil || sky != Cloudy || res.StopReason != onion.StopBudget {
		t.Fatalf("answer %q, stop %s, err %v", sky, res.StopReason, err)
	}
	if _, ok := formatOf(t, s.Requests()[1]); !ok {
		t.Error("the final request for the budget asked for no structured output")
	}
}

func TestTokenBudgetRefusesLessThanOne(t *testing.T) {
	if _, err := onion.NewAgent("t", onion.TokenBudget(0)); err == nil || !strings.Contains(err.Error(), "onion.TokenBudget(0)") {
		t.Errorf("err = %v", err)
	}
}
