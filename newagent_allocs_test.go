//go:build !race

package onion_test

import (
	"testing"

	"github.com/onionkit/onion"
)

// cachedAgentAllocs bounds what NewAgent allocates for a struct of ten
// methods whose bindings are cached: the figure of commit 725da6a's
// parent, which #15 asks to get back to. (The race detector allocates on
// its own, hence the build tag.)
const cachedAgentAllocs = 132

func TestNewAgentCachedAllocations(t *testing.T) {
	if _, err := onion.NewAgent("warm", &tenMethods{}); err != nil {
		t.Fatal(err)
	}
	var a *onion.Agent
	n := testing.AllocsPerRun(100, func() {
		var err error
		if a, err = onion.NewAgent("cached", &tenMethods{}); err != nil {
			t.Fatal(err)
		}
	})
	if n > cachedAgentAllocs {
		t.Errorf("a cached NewAgent of ten methods allocates %.0f times, want at most %d", n, cachedAgentAllocs)
	}
	t.Logf("%.0f allocations", n)
	// The signatures cached beside the bindings are each tool's own.
	if got, want := a.DescribeTools()[3].Signature, "m3(q string, n int)"; got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	renamed, err := onion.ToolsFrom(&tenMethods{}, onion.Method("M3", onion.Name("count")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range renamed {
		if tool.Name() == "count" && tool.Signature() != "count(q string, n int)" {
			t.Errorf("renamed tool's signature %q, want count(q string, n int)", tool.Signature())
		}
	}
}
