package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

func TestDirect(t *testing.T) {
	// A server with no script: any model request would fail the test.
	s := oniontest.NewServer(t)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")

	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"  convert(args ConvertArgs) string\n      Converts an amount of money between currencies at fixed rates.\n",
		"  word_count(text string, minLen int) int\n",
		"convert.Call: 92.00 EUR\n",
		"word_count.Run: 5 (int)\n",
		"(errors.Is ErrInvalidArguments: true)",
		`- to: required field is missing`,
		`- amount: expected a number >= 0, got number -5`,
		`- from: expected one of "EUR", "USD", "GBP", got string "JPY"`,
		`- decimals: expected integer, got string "two"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q\n%s", want, got)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests reached the model; calling tools directly must send none", n)
	}
}
