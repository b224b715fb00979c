package onion_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// filtered is a whole Chat Completions reply the provider stopped for
// its content filter, as OpenAI documents the finish reason, with a tool
// call it had begun.
const filtered = `{"id":"chatcmpl-f","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"I can",` +
	`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"write","arguments":"{\"entry\":\"x\"}"}}]},"finish_reason":"content_filter"}]}`

// TestAskRefused: Ask given a structured-output refusal (Chat Completions'
// refusal member, as OpenAI documents it) returns an error wrapping
// ErrRefused at once, with no request to correct the answer.
func TestAskRefused(t *testing.T) {
	body := `{"id":"chatcmpl-r","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I cannot help with that."},"finish_reason":"stop"}]}`
	s := oniontest.NewServer(t, oniontest.Replay("application/json", []byte(body)))
	a, err := onion.NewAgent("test", onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.Model("test-model"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	type plan struct {
		Steps []string `json:"steps"`
	}
	_, res, err := onion.Ask[plan](context.Background(), a, "plan it")
	if !errors.Is(err, onion.ErrRefused) || res == nil || res.StopReason != onion.StopRefused || res.Output != "I cannot help with that." {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestRefusedReply (Chat Completions): a reply the provider refused ends the run with
// StopRefused and an error wrapping ErrRefused that names the finish
// reason; its tool calls never run, and a Conversation keeps no turn of
// it.
func TestRefusedReply(t *testing.T) {
	l := &journal{}
	s := oniontest.NewServer(t, oniontest.Replay("application/json", []byte(filtered)), oniontest.Replay("application/json", []byte(filtered)))
	// Chat Completions alone: the reply is that wire's.
	a, err := onion.NewAgent("test", onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.Model("test-model"), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, onion.ErrRefused) || !strings.Contains(err.Error(), "content_filter") {
		t.Fatalf("err %v, want one wrapping ErrRefused naming content_filter", err)
	}
	if res == nil || res.StopReason != onion.StopRefused || res.Output != "I can" || len(res.ToolCalls) != 0 || l.writes != 0 {
		t.Fatalf("result %+v, %d writes", res, l.writes)
	}
	c := a.NewConversation()
	if _, err := c.Input(context.Background(), "go"); !errors.Is(err, onion.ErrRefused) {
		t.Fatalf("Conversation.Input: err %v", err)
	}
	if h := c.History(); len(h) != 0 {
		t.Errorf("the conversation kept %d messages of a refused turn", len(h))
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests, want 2: a refusal is not asked again", n)
	}
}
