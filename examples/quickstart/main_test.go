package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

func TestWithoutModel(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		`"name": "get_weather"`,
		`"description": "Returns the current temperature of a city in degrees Celsius."`,
		`"description": "the city's English name, such as \"Paris\""`,
		`"name": "subtract"`,
		`"description": "the number to subtract from"`,
		`get_weather({"city":"Lisbon"}) -> 21.5`,
		`subtract({"a":21.5,"b":4}) -> 17.5`,
		`get_weather({"city":"Atlantis"}) -> error: no weather for "Atlantis"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %s\n%s", want, got)
		}
	}
	var hints []string
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "OPENAI_API_KEY") || strings.Contains(line, "OPENAI_BASE_URL") {
			hints = append(hints, line)
		}
	}
	if len(hints) != 1 || !strings.Contains(hints[0], "OPENAI_API_KEY") || !strings.Contains(hints[0], "OPENAI_BASE_URL") ||
		!strings.Contains(hints[0], "Ollama") {
		t.Errorf("want one hint line naming OPENAI_API_KEY and OPENAI_BASE_URL, got %q", hints)
	}
}

func TestWithModel(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(
			oniontest.Call("get_weather", `{"city":"Lisbon"}`),
			oniontest.Call("get_weather", `{"city":"Oslo"}`),
		),
		oniontest.ToolCalls(oniontest.Call("subtract", `{"a":21.5,"b":4}`)),
		oniontest.Text("Lisbon is 17.5 °C warmer than Oslo."),
	)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("ONION_MODEL", "test-model")
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want := "Q: " + question + "\nA: Lisbon is 17.5 °C warmer than Oslo.\n"
	if out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first := reqs[0].Body
	if first.Model != "test-model" {
		t.Errorf("model = %q, want test-model", first.Model)
	}
	if auth := reqs[0].Header.Get("Authorization"); auth != "Bearer test" {
		t.Errorf("Authorization = %q", auth)
	}
	var names []string
	for _, tool := range first.Tools {
		names = append(names, tool.Function.Name)
	}
	if strings.Join(names, ",") != "get_weather,subtract" {
		t.Errorf("tools sent = %v", names)
	}
	if last := first.Messages[len(first.Messages)-1]; last.Role != openai.ChatMessageRoleUser || last.Content != question {
		t.Errorf("last message of the first request = %+v", last)
	}
	// The tool results went back to the model as tool messages.
	want2 := map[string]string{}
	for _, m := range reqs[1].ToolResults() {
		want2[m.ToolCallID] = m.Content
	}
	if len(want2) != 2 || !containsValue(want2, "21.5") || !containsValue(want2, "4") {
		t.Errorf("tool results in the second request = %v", want2)
	}
	msgs := reqs[2].Body.Messages
	if last := msgs[len(msgs)-1]; last.Role != openai.ChatMessageRoleTool || last.Content != "17.5" {
		b, _ := json.Marshal(last)
		t.Errorf("subtract's result was not sent back: %s", b)
	}
}

func containsValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}
