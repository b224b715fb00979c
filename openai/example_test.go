package openai_test

import (
	"context"
	"fmt"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/openai"
)

// A Model sends one request; here to oniontest's OpenAI server, over the
// Responses API.
func ExampleNew() {
	s := oniontest.NewServer(nil, oniontest.Text("Hello."))
	defer s.Close()
	defer openai.CloseIdleConnections()
	m, err := openai.New(openai.BaseURL(s.URL()), openai.APIKey("test-key"), openai.ResponsesAPI())
	if err != nil {
		panic(err)
	}
	resp, err := m.Generate(context.Background(), &loop.Request{Model: "gpt-4o-mini",
		Messages: []loop.Message{{Role: loop.RoleUser, Content: "Say hello."}}}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Message.Content)
	// Output: Hello.
}
