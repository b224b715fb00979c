// Package browser holds a headless Chromium the model drives: the tools
// goto, page_text, click, type_text, screenshot, new_tab, switch_tab,
// list_tabs and close_tab, all methods of a Browser. It is a package of its
// own, apart from builtin, because the Chrome DevTools Protocol is heavy: a
// program that does not browse does not build it. Importing it also lets
// builtin.Tools build "browser".
//
//	b := browser.NewBrowser()
//	agent, err := onion.NewAgent("browser", b) // Agent.Close closes b
package browser

import (
	"io"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/internal/toolref"
)

func init() {
	toolref.Register("browser", func() ([]*onion.Tool, io.Closer, error) {
		b := NewBrowser()
		ts, err := onion.ToolsFrom(b)
		if err != nil {
			b.Close()
			return nil, nil, err
		}
		return ts, b, nil
	})
}

// The facts onion reads from this package's doc comments are also compiled
// in, so that the tools keep their descriptions and parameter names in
// binaries built with -trimpath or run far from the module cache.
//go:generate go run github.com/onionkit/onion/cmd/oniondoc
