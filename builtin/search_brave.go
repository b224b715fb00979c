package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Brave returns a provider that searches with the Brave Search API,
// GET https://api.search.brave.com/res/v1/web/search?q=...&count=N, with
// apiKey in the X-Subscription-Token header.
func Brave(apiKey string, opts ...SearchOption) SearchProvider {
	return &brave{key: apiKey, cfg: newSearchConfig("brave", "https://api.search.brave.com", opts)}
}

type brave struct {
	key string
	cfg searchConfig
}

// String keeps the API key out of logs that print the provider.
func (b *brave) String() string { return "brave search (" + b.cfg.base + ")" }

func (b *brave) Search(ctx context.Context, query string, max int) ([]SearchResult, error) {
	q := url.Values{"q": {query}, "count": {strconv.Itoa(max)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.cfg.base+"/res/v1/web/search?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("brave search: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	body, err := b.cfg.do(req, "check the API key (BRAVE_API_KEY)")
	if err != nil {
		return nil, err
	}
	// Only web.results is read. mixed.main orders results of several
	// kinds by index and may point past the end of web.results (it does in
	// the documented example), so it is not used.
	var answer struct {
		Web *struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("brave search: unreadable answer: %w", err)
	}
	if answer.Web == nil {
		return []SearchResult{}, nil
	}
	results := make([]SearchResult, len(answer.Web.Results))
	for i, r := range answer.Web.Results {
		results[i] = SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Description}
	}
	return keepResults(results, max, true), nil
}
