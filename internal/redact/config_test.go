package redact

import (
	"reflect"
	"testing"
)

// TestConfig: what Config adds to New: values found only whole, a shorter
// least secret, the views a parser makes, and quotes left out of a span.
func TestConfig(t *testing.T) {
	for _, c := range []struct {
		name     string
		c        Config
		in, want string
	}{
		{"whole only", Config{Whole: []string{"application/vnd.github+json"}}, "application/json; application/vnd.github+json", "application/json; " + Mark},
		{"short secret", Config{Secrets: []string{"abc123"}, MinSecret: 6}, "x abc123 y", "x " + Mark + " y"},
		{"short secret, default least", Config{Secrets: []string{"abc123"}}, "x abc123 y", "x abc123 y"},
		{"markup", Config{Secrets: []string{key}, Markup: true}, "<b>" + key[:20] + "</b><i>" + key[20:] + "</i>", "<b>" + Mark + "</i>"},
		{"no markup", Config{Secrets: []string{key}}, "<b>" + key[:20] + "</b><i>" + key[20:] + "</i>", "<b>" + Mark + "</b><i>" + Mark + "</i>"},
		{"quotes taken", Config{Secrets: []string{`"` + key + `"`}}, `{"t":"` + key + `"}`, `{"t":` + Mark + `}`},
		{"quotes kept", Config{Secrets: []string{`"` + key + `"`}, TrimQuotes: true}, `{"t":"` + key + `"}`, `{"t":"` + Mark + `"}`},
	} {
		if got := c.c.New().String(c.in); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestParts: the parts of a credential header's value an application may
// echo on their own.
func TestParts(t *testing.T) {
	for _, c := range []struct {
		value string
		want  []string
	}{
		{"Bearer " + key, []string{"Bearer " + key, key}},
		{"Basic dXNlcjpodW50ZXIy", []string{"Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy", "user:hunter2", "hunter2"}},
		{`Token token="a\"b", id=x%2Fy`, []string{`Token token="a\"b", id=x%2Fy`, `token="a\"b", id=x%2Fy`, `a"b`, "x%2Fy", "x/y", "x/y"}},
	} {
		if got := Parts(c.value); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.value, got, c.want)
		}
	}
}
