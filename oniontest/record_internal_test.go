package oniontest

import (
	"net/url"
	"testing"
)

// TestRecorderTarget: a request to the recorder goes to the path after
// its /v1 under the upstream's base URL, the queries joined.
func TestRecorderTarget(t *testing.T) {
	for _, c := range []struct{ upstream, in, want string }{
		{"https://api.openai.com/v1", "/v1/chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"https://api.openai.com/v1/", "/v1/responses", "https://api.openai.com/v1/responses"},
		{"https://x.openai.azure.com/openai/v1?api-version=preview", "/v1/responses?a=1", "https://x.openai.azure.com/openai/v1/responses?api-version=preview&a=1"},
		{"http://127.0.0.1:11434/v1", "/v1", "http://127.0.0.1:11434/v1"},
		{"http://127.0.0.1:8080/api", "/v1beta/models", "http://127.0.0.1:8080/api/v1beta/models"},
	} {
		u, _ := url.Parse(c.upstream)
		in, _ := url.Parse(c.in)
		if got := (&recorder{upstream: u}).target(in).String(); got != c.want {
			t.Errorf("%s + %s = %s, want %s", c.upstream, c.in, got, c.want)
		}
	}
}
