package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/onionkit/onion"
	"golang.org/x/net/html"
)

// Limits of web_search.
const (
	defaultSearchResults = 5
	maxSearchResults     = 20
	maxSnippetRunes      = 500     // a snippet is a teaser; web_fetch reads the page
	maxSearchBody        = 4 << 20 // bytes read from a provider's answer
	searchTimeout        = 30 * time.Second
)

// SearchResult is one hit of a web search.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// SearchProvider runs web searches for the web_search tool. Search returns
// at most max results, best first.
type SearchProvider interface {
	Search(ctx context.Context, query string, max int) ([]SearchResult, error)
}

// ErrNoSearchProvider is returned by SearchFromEnv, and by web_search made
// with a nil provider, when no search provider is configured.
var ErrNoSearchProvider = errors.New("no web search provider configured: set SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY")

// SearchFromEnv chooses a provider from the environment: SearXNG at
// SEARXNG_URL, else Brave with BRAVE_API_KEY, else Tavily with
// TAVILY_API_KEY. With none set it returns ErrNoSearchProvider.
// DuckDuckGo is never chosen here; ask for it with DuckDuckGo().
func SearchFromEnv() (SearchProvider, error) {
	if u := strings.TrimSpace(os.Getenv("SEARXNG_URL")); u != "" {
		return SearXNG(u), nil
	}
	if k := strings.TrimSpace(os.Getenv("BRAVE_API_KEY")); k != "" {
		return Brave(k), nil
	}
	if k := strings.TrimSpace(os.Getenv("TAVILY_API_KEY")); k != "" {
		return Tavily(k), nil
	}
	return nil, ErrNoSearchProvider
}

// SearchOption configures a search provider.
type SearchOption func(*searchConfig)

// SearchEndpoint points a provider at another server: the scheme, host and
// optional path prefix that replace the provider's public one (for
// example a test server's URL). The provider's own path, such as
// /res/v1/web/search for Brave, is appended. For SearXNG it replaces the
// base URL.
func SearchEndpoint(baseURL string) SearchOption {
	return func(c *searchConfig) { c.base = baseURL }
}

// SearchHTTPClient sets the HTTP client a provider uses. The default is a
// client with a 30 second timeout over http.DefaultTransport.
func SearchHTTPClient(client *http.Client) SearchOption {
	return func(c *searchConfig) {
		if client != nil {
			c.client = client
		}
	}
}

// searchConfig is what every provider needs to send its requests.
type searchConfig struct {
	name   string // the provider, for error messages
	base   string // scheme, host and path prefix
	client *http.Client
}

func newSearchConfig(name, base string, opts []SearchOption) searchConfig {
	c := searchConfig{name: name, base: base}
	for _, o := range opts {
		o(&c)
	}
	if c.client == nil {
		c.client = &http.Client{Timeout: searchTimeout}
	}
	c.base = strings.TrimRight(c.base, "/")
	return c
}

// do sends req and returns the body of a 200 answer; any other status is
// an error naming the provider, the status and what to do. keyHint tells
// how to fix a refused credential ("check BRAVE_API_KEY").
func (c searchConfig) do(req *http.Request, keyHint string) ([]byte, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s search: %w", c.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return nil, fmt.Errorf("%s search: reading the answer: %w", c.name, err)
	}
	if resp.StatusCode == http.StatusOK {
		return body, nil
	}
	msg := fmt.Sprintf("%s search: the server answered %s", c.name, resp.Status)
	if d := searchErrorDetail(body); d != "" {
		msg += ": " + d
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if keyHint != "" {
			msg += "; " + keyHint
		}
	case resp.StatusCode == http.StatusTooManyRequests:
		msg += "; rate limited: wait before searching again"
	case resp.StatusCode >= 500:
		msg += "; the search service failed: try again later"
	}
	return nil, errors.New(msg)
}

// searchErrorDetail pulls a short message out of an error body: the usual JSON
// error fields, else the start of the text.
func searchErrorDetail(body []byte) string {
	var j struct {
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &j) == nil {
		for _, raw := range []json.RawMessage{j.Error, j.Detail} {
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				return searchClip(s, 200)
			}
			var o struct{ Detail, Message, Error string }
			if json.Unmarshal(raw, &o) == nil {
				for _, s := range []string{o.Detail, o.Message, o.Error} {
					if s != "" {
						return searchClip(s, 200)
					}
				}
			}
		}
		if j.Message != "" {
			return searchClip(j.Message, 200)
		}
		return ""
	}
	if !utf8.Valid(body) || strings.Contains(string(body[:min(len(body), 512)]), "<") {
		return "" // binary or an HTML page: nothing short to say
	}
	return searchClip(string(body), 200)
}

// searchCleanText turns an HTML fragment (Brave and DuckDuckGo mark matches with
// <strong> or <b>) into plain text on one line, cut at max runes.
func searchCleanText(s string, max int) string {
	if strings.ContainsAny(s, "<&") {
		var b strings.Builder
		z := html.NewTokenizer(strings.NewReader(s))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			if tt == html.TextToken {
				b.Write(z.Text())
			}
		}
		s = b.String()
	}
	return searchClip(s, max)
}

// searchClip collapses white space and cuts s at max runes, marking the cut.
func searchClip(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return strings.TrimSpace(s[:i]) + "…"
		}
		n++
	}
	return s
}

// keepResults trims results to max and drops those without a URL. Titles and
// snippets are put on one line and clipped; with markup set they are HTML
// fragments, reduced to their text.
func keepResults(results []SearchResult, max int, markup bool) []SearchResult {
	out := make([]SearchResult, 0, min(len(results), max))
	for _, r := range results {
		if len(out) == max {
			break
		}
		r.URL = strings.TrimSpace(r.URL)
		if r.URL == "" {
			continue
		}
		if markup {
			r.Title, r.Snippet = searchCleanText(r.Title, 300), searchCleanText(r.Snippet, maxSnippetRunes)
		} else {
			r.Title, r.Snippet = searchClip(r.Title, 300), searchClip(r.Snippet, maxSnippetRunes)
		}
		out = append(out, r)
	}
	return out
}

// webSearchDescription is what the model reads about web_search.
const webSearchDescription = `Search the web. Returns a JSON list of results, best first, each with "title", "url" and "snippet" (a short excerpt). ` +
	`Snippets are only teasers: fetch a result's url to read the page itself.`

// NewWebSearch returns the web_search tool (intent read): it searches the
// web with provider and returns a list of {title, url, snippet}, at most
// max_results (default 5, at most 20). With a nil provider the tool still
// exists, and every call fails with ErrNoSearchProvider, telling the model
// (and whoever reads the transcript) which variables to set. Use
// SearchFromEnv to pick a provider from the environment.
func NewWebSearch(provider SearchProvider) *onion.Tool {
	s := &webSearcher{provider: provider}
	return mustTool(onion.NewTool(s.webSearch,
		onion.Name("web_search"),
		onion.Description(webSearchDescription),
		onion.Read,
	))
}

// webSearcher is one web_search tool.
type webSearcher struct{ provider SearchProvider }

// webSearchArgs are web_search's parameters.
type webSearchArgs struct {
	Query      string `json:"query" doc:"What to search for, as you would type it into a search engine."`
	MaxResults int    `json:"max_results,omitempty" doc:"How many results to return, 1 to 20; 5 if not given." jsonschema:"minimum=1,maximum=20,default=5"`
}

// webSearch is the tool's function.
func (s *webSearcher) webSearch(ctx context.Context, args webSearchArgs) ([]SearchResult, error) {
	if s.provider == nil {
		return nil, ErrNoSearchProvider
	}
	q := strings.TrimSpace(args.Query)
	if q == "" {
		return nil, errors.New("query is empty: say what to search for")
	}
	n := args.MaxResults
	if n <= 0 {
		n = defaultSearchResults
	}
	n = min(n, maxSearchResults)
	results, err := s.provider.Search(ctx, q, n)
	if err != nil {
		return nil, err
	}
	if results == nil {
		results = []SearchResult{} // "[]" to the model, not "null"
	}
	return results[:min(len(results), n)], nil
}

// contentResults reads the answer shape SearXNG and Tavily share:
// {"results": [{"title", "url", "content"}]}.
func contentResults(provider string, body []byte, max int) ([]SearchResult, error) {
	var answer struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("%s search: unreadable answer: %w", provider, err)
	}
	results := make([]SearchResult, len(answer.Results))
	for i, r := range answer.Results {
		results[i] = SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Content}
	}
	return keepResults(results, max, false), nil
}
