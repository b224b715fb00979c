package onion_test

import (
	"context"
	"fmt"
	"log"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
)

// pagesModel calls web_fetch six times, then answers; it answers a
// compaction's summary request with a summary.
func pagesModel(_ context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
	if req.Messages[0].Content == loop.SummaryPrompt {
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: "pages 1 to 5 say lorem ipsum"}}, nil
	}
	calls := 0
	for _, m := range req.Messages {
		calls += len(m.ToolCalls)
	}
	if calls == 6 {
		return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: "they all say lorem ipsum"}}, nil
	}
	url := fmt.Sprintf(`{"url":"https://example.com/%d"}`, calls+1)
	return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant,
		ToolCalls: []onion.ToolRequest{{ID: fmt.Sprint("call_", calls+1), Name: "web_fetch", Arguments: url}}}}, nil
}

// A run whose tool results would fill the context: past 8,000 estimated
// tokens the older results become notes, and the run reports it.
func ExampleCompactAfter() {
	// snippet:compact
	agent, err := onion.NewAgent("reader", WebFetch,
		onion.CompactAfter(8_000),                 // compact before a request would pass ~8k tokens
		onion.CompactWith(onion.CompactSummarize), // notes first, then a summary if needed (the default)
		onion.WithModel(onion.ModelFunc(pagesModel)))
	if err != nil {
		log.Fatal(err)
	}
	conv := agent.NewConversation()
	for e, err := range conv.Stream(context.Background(), "what do the pages say?") {
		if err != nil {
			log.Fatal(err)
		}
		if c := e.Compaction; e.Kind == onion.EventCompacted {
			fmt.Printf("request %d: %d → %d tokens, %d results left out, %d messages summarized\n",
				c.Iteration, c.Before, c.After, c.ToolResults, c.Summarized)
		}
	}
	// end snippet:compact
	fmt.Println(conv.History()[1].Content)
	// Output:
	// request 4: 9163 → 3195 tokens, 2 results left out, 0 messages summarized
	// request 6: 9250 → 3282 tokens, 2 results left out, 0 messages summarized
	// they all say lorem ipsum
}
