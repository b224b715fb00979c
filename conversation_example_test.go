package onion_test

import (
	"context"
	"fmt"
	"log"

	"github.com/onionkit/onion"
)

// rememberModel answers with how many user prompts its request carried.
type rememberModel struct{}

func (rememberModel) Generate(_ context.Context, req *onion.Request, _ func(onion.Delta)) (*onion.Response, error) {
	n := 0
	for _, m := range req.Messages {
		if m.Role == onion.RoleUser {
			n++
		}
	}
	return &onion.Response{Message: onion.Message{Role: onion.RoleAssistant, Content: fmt.Sprintf("I have seen %d prompts", n)}}, nil
}

// One agent, two users: each conversation carries its own history, and
// the agent's own Run carries none.
func ExampleAgent_NewConversation() {
	agent, err := onion.NewAgent("assistant", onion.WithModel(rememberModel{}))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// snippet:conversation
	ann := agent.NewConversation() // one per user, chat or session
	bob := agent.NewConversation()
	if _, err := ann.Input(ctx, "My name is Ann."); err != nil {
		log.Fatal(err)
	}
	answer, err := ann.Input(ctx, "What is my name?") // sent after Ann's first turn
	// end snippet:conversation
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ann:", answer)
	answer, _ = bob.Input(ctx, "What is my name?")
	fmt.Println("bob:", answer)
	answer, _ = agent.Input(ctx, "What is my name?")
	fmt.Println("agent:", answer)
	// snippet:save
	saved, err := ann.MarshalHistory() // JSON: an array of onion.Message
	if err != nil {
		log.Fatal(err)
	}
	later := agent.NewConversation()
	if err := later.UnmarshalHistory(saved); err != nil {
		log.Fatal(err)
	}
	// end snippet:save
	fmt.Println("restored:", len(later.History()), "messages")
	// Output:
	// ann: I have seen 2 prompts
	// bob: I have seen 1 prompts
	// agent: I have seen 1 prompts
	// restored: 4 messages
}
