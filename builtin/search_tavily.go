package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Tavily returns a provider that searches with the Tavily API,
// POST https://api.tavily.com/search with a JSON body and apiKey as a
// bearer token.
func Tavily(apiKey string, opts ...SearchOption) SearchProvider {
	return &tavily{key: apiKey, cfg: newSearchConfig("tavily", "https://api.tavily.com", opts)}
}

type tavily struct {
	key string
	cfg searchConfig
}

// String keeps the API key out of logs that print the provider.
func (t *tavily) String() string { return "tavily search (" + t.cfg.base + ")" }

// tavilyRequest is the body of a Tavily search.
type tavilyRequest struct {
	Query       string `json:"query"`
	SearchDepth string `json:"search_depth"`
	Topic       string `json:"topic"`
	MaxResults  int    `json:"max_results"`
}

func (t *tavily) Search(ctx context.Context, query string, max int) ([]SearchResult, error) {
	payload, err := json.Marshal(tavilyRequest{Query: query, SearchDepth: "basic", Topic: "general", MaxResults: max})
	if err != nil {
		return nil, fmt.Errorf("tavily search: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.cfg.base+"/search", bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("tavily search: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	body, err := t.cfg.do(req, "check the API key (TAVILY_API_KEY)")
	if err != nil {
		return nil, err
	}
	return contentResults("tavily", body, max)
}
