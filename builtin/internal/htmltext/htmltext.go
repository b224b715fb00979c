// Package htmltext reads the text of parsed HTML, for the built-in tools
// that read web pages (web search results, fetched pages).
package htmltext

import (
	"strings"

	"golang.org/x/net/html"
)

// Text returns the text below n with its white space collapsed, or "" for
// a nil n.
func Text(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
