package builtin

import (
	"path"
	"strings"
	"testing"
)

// FuzzGlobMatch checks the glob matcher against a plain backtracking one,
// which takes exponential time on hostile patterns but is easy to trust on
// the short ones a fuzzer makes.
func FuzzGlobMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"**/*.go", "a/b/c.go"},
		{"pkg/**", "pkg"},
		{"**/deep/*", "pkg/deep/b.go"},
		{"**/**/x", "x"},
		{"a/**/b/**/c", "a/b/b/c/c"},
		{"*", ".git"},
		{"[a-c]?/**", "bx/y"},
		{"**", ""},
		{"**/x", "d/d/d/d/d/d/d/x"}, // the shape of a deep chain a walk goes down
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if strings.Count(pattern, "/") > 8 || strings.Count(name, "/") > 8 || name == "" {
			return
		}
		g, err := compileGlob(pattern)
		if err != nil {
			return
		}
		st := g.start()
		segs := strings.Split(name, "/")
		for _, s := range segs {
			st = g.advance(st, s)
		}
		if got, want := g.matches(st), matchSegmentsRef(g.segs, segs); got != want {
			t.Fatalf("glob %q on %q: matches = %v, want %v", pattern, name, got, want)
		}
	})
}

// matchSegmentsRef reports whether the path segments name match the
// pattern segments pat, a "**" segment matching any number of them.
func matchSegmentsRef(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegmentsRef(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
