// Package toolref lets builtin.Tools name tools that live in packages of
// their own under builtin/ — the browser and web_fetch — without importing
// them: each such package registers its reference when it is linked in, so
// a program pays for Chromium's protocol or a readability parser only when
// it imports the package that needs them.
package toolref

import (
	"io"
	"sync"

	"github.com/onionkit/onion"
)

// Builder makes the tools of one reference with their defaults, and returns
// what they hold open, if anything.
type Builder func() ([]*onion.Tool, io.Closer, error)

var (
	mu       sync.Mutex // guards builders
	builders = map[string]Builder{}
)

// Register makes ref buildable by builtin.Tools. Packages call it from init.
func Register(ref string, b Builder) {
	mu.Lock()
	defer mu.Unlock()
	builders[ref] = b
}

// Lookup returns the builder registered for ref, if its package is linked in.
func Lookup(ref string) (Builder, bool) {
	mu.Lock()
	defer mu.Unlock()
	b, ok := builders[ref]
	return b, ok
}
