package builtin

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/onionkit/onion/builtin/internal/htmltext"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DuckDuckGo returns a provider that reads DuckDuckGo's HTML results page,
// GET https://html.duckduckgo.com/html/?q=... It needs no key, but it is a
// page for people, not an API: DuckDuckGo may change it or turn automated
// searches away. It is only used when asked for; SearchFromEnv never picks
// it.
func DuckDuckGo(opts ...SearchOption) SearchProvider {
	return &duckDuckGo{newSearchConfig("duckduckgo", "https://html.duckduckgo.com", opts)}
}

type duckDuckGo struct{ cfg searchConfig }

func (d *duckDuckGo) Search(ctx context.Context, query string, max int) ([]SearchResult, error) {
	q := url.Values{"q": {query}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.cfg.base+"/html/?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("duckduckgo search: %w", err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; onion-web-search/1.0; +https://github.com/onionkit/onion)")
	req.Header.Set("Accept", "text/html")
	body, err := d.cfg.do(req, "")
	if err != nil {
		return nil, err
	}
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("duckduckgo search: unreadable page: %w", err)
	}
	var results []SearchResult
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Div && webHTMLHasClass(n, "result") {
			if r, ok := ddgResult(n); ok {
				results = append(results, r)
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(results) == 0 && bytes.Contains(body, []byte("anomaly")) {
		return nil, fmt.Errorf("duckduckgo search: the search was turned away as automated traffic; wait and try again, or use another provider")
	}
	return keepResults(results, max, false), nil
}

// ddgResult reads one div.result block: the title link a.result__a, whose
// href is a //duckduckgo.com/l/?uddg=<target> redirect, and the snippet
// .result__snippet. Ads are skipped.
func ddgResult(div *html.Node) (SearchResult, bool) {
	if webHTMLHasClass(div, "result--ad") {
		return SearchResult{}, false
	}
	var r SearchResult
	var href string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch {
			case n.DataAtom == atom.A && webHTMLHasClass(n, "result__a") && href == "":
				href, r.Title = webHTMLAttr(n, "href"), htmltext.Text(n)
				return
			case webHTMLHasClass(n, "result__snippet") && r.Snippet == "":
				r.Snippet = htmltext.Text(n)
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(div)
	r.URL = ddgTarget(href)
	return r, r.URL != ""
}

// ddgTarget decodes a result link: //duckduckgo.com/l/?uddg=<target>
// becomes the target. Ad links (/y.js) and anything not http(s) give "".
func ddgTarget(href string) string {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return ""
	}
	if u.Scheme == "" {
		u.Scheme = "https"
	}
	if host := strings.TrimPrefix(u.Hostname(), "www."); host == "duckduckgo.com" {
		if u.Path != "/l/" && u.Path != "/l" {
			return "" // /y.js is an ad; other DuckDuckGo pages are not results
		}
		t, err := url.Parse(u.Query().Get("uddg"))
		if err != nil {
			return ""
		}
		u = t
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

func webHTMLHasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(webHTMLAttr(n, "class")), class)
}

func webHTMLAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
