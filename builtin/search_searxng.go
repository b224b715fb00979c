package builtin

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// SearXNG returns a provider that searches a SearXNG instance at baseURL
// (for example http://localhost:8080) through its JSON API,
// GET {baseURL}/search?q=...&format=json. The instance must allow the json
// format (search.formats in its settings.yml).
func SearXNG(baseURL string, opts ...SearchOption) SearchProvider {
	return &searxng{newSearchConfig("searxng", baseURL, opts)}
}

type searxng struct{ cfg searchConfig }

func (s *searxng) Search(ctx context.Context, query string, max int) ([]SearchResult, error) {
	endpoint := s.cfg.base
	if !strings.HasSuffix(endpoint, "/search") {
		endpoint += "/search"
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("searxng search: invalid instance url %q; want http(s)://host[:port][/prefix]", s.cfg.base)
	}
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("searxng search: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	body, err := s.cfg.do(req, "is the json format enabled in the instance's settings.yml (search.formats)?")
	if err != nil {
		return nil, err
	}
	return contentResults("searxng", body, max)
}
