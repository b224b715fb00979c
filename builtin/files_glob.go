package builtin

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Glob finds files and directories whose path matches a pattern, one a line,
// sorted. The pattern uses * (any characters except /), ? (one character),
// [abc] (one of a set), and ** (any number of directories, as in "**/*.go").
// .git directories are skipped unless the pattern names .git.
//
// pattern: the pattern, relative to the workspace root, such as "src/*.go" or "**/*_test.go"
//
//onion:intent read
func (f *Files) Glob(ctx context.Context, pattern string) (string, error) {
	if pattern == "" {
		return "", errors.New("files: glob: pattern is empty: give one such as \"**/*.go\"")
	}
	if _, err := f.clean("glob", pattern, false); err != nil {
		return "", err
	}
	pattern = path.Clean(filepath.ToSlash(pattern))
	pat, err := compileGlob(pattern)
	if err != nil {
		return "", err
	}
	d, err := openWalkStart(f.root, ".")
	if err != nil {
		return "", f.fail("glob", ".", err)
	}
	g := &globWalk{pat: pat, w: &walkBudget{ctx: ctx, entries: maxWalkEntries, open: 1}, max: f.maxResults}
	err = g.dir(d, pat.start())
	if err != nil && !errors.Is(err, errBudget) {
		return "", fmt.Errorf("files: glob %q: stopped: %w", pattern, err)
	}
	if len(g.matches) == 0 && g.w.cut == "" {
		return fmt.Sprintf("no files match %q", pattern), nil
	}
	// The matches kept are the first found, in the order of the walk: each
	// directory's entries by name.
	slices.Sort(g.matches)
	return joinCapped(g.matches, g.more, g.w.cut, "matches", "narrow the pattern"), nil
}

// globWalk is the state of one glob.
type globWalk struct {
	pat     *globPattern
	w       *walkBudget
	dirs    []string // the path from the root to the directory being read
	matches []string // the first max matches found
	max     int
	more    int // matches found past max
}

// dir visits the entries of d, whose path from the root matched the pattern
// up to the states in at, and closes d.
func (g *globWalk) dir(d *walkDir, at globStates) error {
	defer func() {
		if d != nil {
			g.w.release(d)
		}
	}()
	names, err := g.w.names(d)
	if err != nil {
		return err
	}
	// Only the entries that the pattern may go down into, or that are
	// named .git, need d to learn what they are.
	nexts := make([]globStates, len(names))
	last := -1 // the last entry that needs d
	for i, name := range names {
		next := g.pat.advance(at, name)
		nexts[i] = next
		if len(next) > 0 && (g.pat.descends(next) || g.skipsGit(name)) {
			last = i
		}
	}
	for i, name := range names {
		next := nexts[i]
		if len(next) == 0 {
			continue
		}
		isDir := false
		if g.pat.descends(next) || g.skipsGit(name) {
			mode, err := d.lstat(name)
			if err != nil {
				continue // gone, or unreadable: skipped
			}
			isDir = mode.IsDir()
		}
		if isDir && g.skipsGit(name) {
			continue
		}
		if g.pat.matches(next) {
			g.add(name)
		}
		if !isDir || !g.pat.descends(next) {
			continue
		}
		child := g.w.descend(d, name, len(g.dirs))
		if i == last {
			g.w.release(d) // nothing after this entry needs it
			d = nil
		}
		if child == nil {
			continue
		}
		g.dirs = append(g.dirs, name)
		err := g.dir(child, next)
		g.dirs = g.dirs[:len(g.dirs)-1]
		if err != nil {
			return err
		}
	}
	return nil
}

// skipsGit reports whether an entry called name is skipped if it is a
// directory.
func (g *globWalk) skipsGit(name string) bool { return name == ".git" && !g.pat.namesGit }

// add keeps the entry name of the directory being read as a match, or
// counts it once max are kept.
func (g *globWalk) add(name string) {
	if len(g.matches) == g.max {
		g.more++
		return
	}
	g.matches = append(g.matches, joinPath(g.dirs, name))
}

// maxGlobSegments bounds the segments of a glob pattern.
const maxGlobSegments = 64

// globPattern is a compiled glob: its segments, matched against a path's
// segments by a set of positions in the pattern (an NFA), so that any
// number of ** costs time in proportion to the pattern's length, never
// exponential in it.
type globPattern struct {
	segs     []string // "**" stands for any number of path segments
	namesGit bool     // a segment is literally ".git"
}

// globStates are the positions in the pattern reached so far, ascending.
type globStates []int

func compileGlob(pattern string) (*globPattern, error) {
	var segs []string
	for _, s := range strings.Split(pattern, "/") {
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("files: glob %q: %w: check the brackets and escapes", pattern, err)
		}
		if s == "**" && len(segs) > 0 && segs[len(segs)-1] == "**" {
			continue // **/** is **
		}
		segs = append(segs, s)
	}
	if len(segs) > maxGlobSegments {
		return nil, fmt.Errorf("files: glob: the pattern has %d segments, over the limit of %d: shorten it", len(segs), maxGlobSegments)
	}
	return &globPattern{segs: segs, namesGit: slices.Contains(segs, ".git")}, nil
}

// start returns the states before any segment of a path.
func (g *globPattern) start() globStates { return g.closure(globStates{0}) }

// closure adds the positions reached by letting each ** match nothing.
func (g *globPattern) closure(st globStates) globStates {
	for i := 0; i < len(st); i++ {
		if n := st[i]; n < len(g.segs) && g.segs[n] == "**" && !slices.Contains(st, n+1) {
			st = append(st, n+1)
		}
	}
	slices.Sort(st)
	return st
}

// advance returns the states after one more path segment, name.
func (g *globPattern) advance(st globStates, name string) globStates {
	var next globStates
	add := func(n int) {
		if !slices.Contains(next, n) {
			next = append(next, n)
		}
	}
	for _, n := range st {
		if n == len(g.segs) {
			continue
		}
		if g.segs[n] == "**" {
			add(n) // ** takes this segment and may take more
			continue
		}
		if ok, _ := path.Match(g.segs[n], name); ok {
			add(n + 1)
		}
	}
	return g.closure(next)
}

// matches reports whether a path that reached st matches the whole pattern.
func (g *globPattern) matches(st globStates) bool { return slices.Contains(st, len(g.segs)) }

// descends reports whether a longer path may still match.
func (g *globPattern) descends(st globStates) bool { return len(st) > 0 && st[0] < len(g.segs) }
