package onion_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// TestNotFoundSaysWhere: a 404 from the model endpoint names the API and
// the URL it came from, and says what is likely wrong: a base URL without
// /v1, or a server without the Responses API.
func TestNotFoundSaysWhere(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("never sent"))
	noV1 := strings.TrimSuffix(s.URL(), "/v1")
	bare := httptest.NewServer(http.NotFoundHandler())
	defer bare.Close()
	for _, tc := range []struct {
		name string
		opts []any
		want []string
	}{
		{"no /v1", []any{onion.BaseURL(noV1)}, []string{"Chat Completions at " + noV1 + "/chat/completions", "404", "the base URL has no /v1"}},
		{"no Responses API", []any{onion.BaseURL(bare.URL + "/v1"), onion.ResponsesAPI()}, []string{"the Responses API at " + bare.URL + "/v1/responses", "404", "may not serve the Responses API"}},
		{"wrong path", []any{onion.BaseURL(bare.URL + "/v1")}, []string{"Chat Completions at " + bare.URL + "/v1/chat/completions", "404", "check the base URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := onion.NewAgent("a", append([]any{onion.APIKey("k"), onion.Retries(0)}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			_, err = a.Run(context.Background(), "hi")
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v\nwant it to say %q", err, want)
				}
			}
		})
	}
}

// TestNoModelConfigured: an agent with neither key nor base URL is made
// (its tools can be listed and called), and its first run fails before
// any request with ErrNoModel, which says what to set.
func TestNoModelConfigured(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	a, err := onion.NewAgent("a", Lookup)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if len(a.Tools().All()) != 1 {
		t.Errorf("tools %v", a.Tools().Names())
	}
	res, err := a.Run(context.Background(), "hi")
	if !errors.Is(err, onion.ErrNoModel) || !strings.Contains(err.Error(), "set OPENAI_API_KEY") || !strings.Contains(err.Error(), "OPENAI_BASE_URL=http://localhost:11434/v1") {
		t.Errorf("err = %v, want ErrNoModel saying what to set", err)
	}
	if res == nil || res.Usage.Requests != 0 || res.StopReason != onion.StopFailed {
		t.Errorf("result %+v", res)
	}
}
