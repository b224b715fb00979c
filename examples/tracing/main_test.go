package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

func TestTracing(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)).WithUsage(40, 8),
		oniontest.Text("It is sunny in Paris.").WithUsage(60, 7),
	)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("ONION_MODEL", "gpt-4o-mini")
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log(got)
	for _, want := range []string{
		`"Name": "invoke_agent assistant"`, // the exporter's JSON
		`"Key": "gen_ai.operation.name"`,
		"It is sunny in Paris.\n", // the answer
		"handle request  [internal",
		"\n  invoke_agent assistant  [internal",
		"\n    chat gpt-4o-mini  [client",
		"\n    execute_tool weather  [internal",
		"\n      lookup Paris  [internal",
		"onion.tool.outcome=succeeded",
		"onion.run.stop_reason=natural",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
