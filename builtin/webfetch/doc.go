// Package webfetch holds the web_fetch tool: it fetches one public http(s)
// page and returns its readable content, HTML reduced to its main text as
// Markdown. It is a package of its own, apart from builtin, because its
// page extraction (go-readability, html-to-markdown) is heavy: a program
// that does not fetch pages does not build it. Importing it also lets
// builtin.Tools build "web_fetch".
//
//	agent, err := onion.NewAgent("researcher", webfetch.NewWebFetch())
package webfetch

import (
	"io"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/internal/toolref"
)

func init() {
	toolref.Register("web_fetch", func() ([]*onion.Tool, io.Closer, error) {
		return []*onion.Tool{NewWebFetch()}, nil, nil
	})
}

// The facts onion reads from this package's doc comments are also compiled
// in, so that the tool keeps its description and parameter names in
// binaries built with -trimpath or run far from the module cache.
//go:generate go run github.com/onionkit/onion/cmd/oniondoc
