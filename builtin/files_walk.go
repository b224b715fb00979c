package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Glob and grep walk the tree through open directories, one handle for each
// level they are in: each entry is named relative to its directory's
// handle, so it costs the same at any depth. Opening every directory by its
// path from the root instead, as os.Root does, resolves each level of the
// path again, and made a walk of a chain of nested directories quadratic in
// its depth (a chain 8,000 deep took minutes). The handles never follow a
// symbolic link, so the walk cannot leave the directory it started in.
//
// A handle is closed before going down into the last directory that needs
// it, so a chain of directories holds a handle or two at a time; a tree
// that would hold more than maxWalkOpen at once is left out below that.
// (A directory moved out of the workspace while it is walked is followed by
// its handle: moving it there takes write access outside the workspace.)

// maxWalkOpen bounds the directories one glob or grep holds open at once.
const maxWalkOpen = 256

// walkReadNames is how many names a walk reads from a directory at a time,
// spending its budget as it goes.
const walkReadNames = 1024

// errBudget ends a walk that used up its budget; the results so far stand.
var errBudget = errors.New("the walk used up its budget")

// walkBudget bounds one glob or grep: by the call's context, the entries it
// visits, how deep it goes, the directories it holds open and the bytes it
// reads.
type walkBudget struct {
	ctx     context.Context
	entries int    // entries left to visit
	bytes   int64  // bytes left to read; grep only
	open    int    // directories held open
	cut     string // why the walk stopped early or left a part out; "" if it did neither
}

// alive returns the context's cause once the call's context has ended. The
// walk checks it before each directory and file it reads, and for each
// batch of names.
func (w *walkBudget) alive() error {
	if w.ctx.Err() != nil {
		return context.Cause(w.ctx)
	}
	return nil
}

// stop records why the walk stopped and returns errBudget.
func (w *walkBudget) stop(why string) error {
	w.cut = why
	return errBudget
}

// tooDeep records that a directory depth levels down was left out.
func (w *walkBudget) tooDeep(depth int) {
	if w.cut == "" {
		w.cut = fmt.Sprintf("left out directories nested over %d deep, the limit", depth)
	}
}

// names returns the names in d, sorted, spending an entry of the budget
// for each.
func (w *walkBudget) names(d *walkDir) ([]string, error) {
	var all []string
	for {
		if err := w.alive(); err != nil {
			return nil, err
		}
		names, err := d.names(walkReadNames)
		if w.entries -= len(names); w.entries < 0 {
			return nil, w.stop(fmt.Sprintf("stopped early after visiting %d entries, the limit", maxWalkEntries))
		}
		all = append(all, names...)
		if err != nil {
			break // io.EOF, or unreadable: what was read stands
		}
	}
	slices.Sort(all)
	return all, nil
}

// descend opens the directory name in d for a walk that is depth levels
// down in d, or returns nil if it is left out: too deep, or unreadable.
func (w *walkBudget) descend(d *walkDir, name string, depth int) *walkDir {
	if depth >= maxWalkDepth || w.open >= maxWalkOpen {
		w.tooDeep(depth)
		return nil
	}
	child, err := d.openDir(name)
	if err != nil {
		return nil // unreadable directories are skipped, not fatal
	}
	w.open++
	return child
}

// release closes a directory that descend opened.
func (w *walkBudget) release(d *walkDir) {
	d.Close()
	w.open--
}

// joinPath joins the names of a walk's path from the root to one entry.
func joinPath(dirs []string, name string) string {
	if len(dirs) == 0 {
		return name
	}
	return strings.Join(dirs, "/") + "/" + name
}

// joinCapped joins lines, saying how many more were found than shown and,
// if the walk was cut, why and what to do.
func joinCapped(lines []string, more int, cut, what, fix string) string {
	if more > 0 {
		lines = append(lines, fmt.Sprintf("... %d more %s not shown: %s", more, what, fix))
	}
	if cut != "" {
		lines = append(lines, fmt.Sprintf("... %s, more %s may exist: %s", cut, what, fix))
	}
	return strings.Join(lines, "\n")
}

// Grep searches text files for lines matching a regular expression and
// returns them as "path:line: text", one match a line. Binary files, files
// over the size limit and .git directories are skipped.
//
// pattern: a Go (RE2) regular expression, such as "func \w+\(" ; add (?i) to ignore case
// path: a file or directory to search, relative to the workspace root; "" or "." for everything
//
//onion:intent read
func (f *Files) Grep(ctx context.Context, pattern, path string) (string, error) {
	if pattern == "" {
		return "", errors.New("files: grep: pattern is empty: give a regular expression")
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", fmt.Errorf("files: grep: bad regular expression (Go RE2 syntax): %w", err)
	}
	p, err := f.clean("grep", path, true)
	if err != nil {
		return "", err
	}
	fi, err := f.root.Stat(p)
	if err != nil {
		return "", f.fail("grep", p, err)
	}
	g := &grepWalk{
		f:  f,
		re: re,
		w:  &walkBudget{ctx: ctx, entries: maxWalkEntries, bytes: maxGrepBytes},
	}
	slashed := filepath.ToSlash(p)
	switch {
	case fi.IsDir():
		if p != "." {
			g.dirs = strings.Split(slashed, "/")
		}
		var d *walkDir
		if d, err = openWalkStart(f.root, p); err != nil {
			return "", f.fail("grep", p, err)
		}
		g.w.open++
		err = g.dir(d)
	case fi.Mode().IsRegular():
		if b, rerr := f.readCapped(p); rerr == nil {
			err = g.scan(b, func() string { return slashed })
		}
	}
	if err != nil && !errors.Is(err, errBudget) {
		return "", fmt.Errorf("files: grep %q in %s: stopped: %w", pattern, slashed, err)
	}
	if len(g.out) == 0 && g.w.cut == "" {
		return fmt.Sprintf("no matches for %q in %s", pattern, slashed), nil
	}
	return joinCapped(g.out, 0, g.w.cut, "matches", "narrow the pattern or the path"), nil
}

// grepWalk is the state of one grep.
type grepWalk struct {
	f    *Files
	re   *regexp.Regexp
	w    *walkBudget
	dirs []string // the path from the root to the directory being read
	out  []string // the matching lines so far, at most f.maxResults
}

// dir greps the files under d, in the order of their paths, and closes d.
func (g *grepWalk) dir(d *walkDir) error {
	defer func() {
		if d != nil {
			g.w.release(d)
		}
	}()
	names, err := g.w.names(d)
	if err != nil {
		return err
	}
	modes := make([]fs.FileMode, len(names))
	last := -1 // the last directory to go down into
	for i, name := range names {
		mode, err := d.lstat(name)
		if err != nil {
			modes[i] = fs.ModeIrregular // gone, or unreadable: skipped
			continue
		}
		modes[i] = mode.Type()
		if mode.IsDir() && name != ".git" {
			last = i
		}
	}
	for i, name := range names {
		switch {
		case modes[i].IsRegular():
			if err := g.file(d, name); err != nil {
				return err
			}
		case i == last:
			// Grep the files after the last directory first, keeping their
			// lines aside, so that d is closed before going down.
			child := g.w.descend(d, name, len(g.dirs))
			before := g.out
			g.out = nil
			err := g.files(d, names[i+1:], modes[i+1:])
			after := g.out
			g.out = before
			g.w.release(d)
			d = nil
			if child != nil && err == nil {
				err = g.down(child, name)
			} else if child != nil {
				g.w.release(child)
			}
			if len(g.out)+len(after) > g.f.maxResults {
				after = after[:max(0, g.f.maxResults-len(g.out))]
				if err == nil {
					err = g.w.stop(fmt.Sprintf("stopped early at %d matches, the limit", g.f.maxResults))
				}
			}
			g.out = append(g.out, after...)
			return err
		case modes[i].IsDir() && name != ".git":
			if child := g.w.descend(d, name, len(g.dirs)); child != nil {
				if err := g.down(child, name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// down greps the directory child, named name in the directory being read.
func (g *grepWalk) down(child *walkDir, name string) error {
	g.dirs = append(g.dirs, name)
	err := g.dir(child)
	g.dirs = g.dirs[:len(g.dirs)-1]
	return err
}

// files greps the regular files among names, in d.
func (g *grepWalk) files(d *walkDir, names []string, modes []fs.FileMode) error {
	for i, name := range names {
		if modes[i].IsRegular() {
			if err := g.file(d, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// file greps the file name in d, if it is a text file within the size
// limit.
func (g *grepWalk) file(d *walkDir, name string) error {
	if err := g.w.alive(); err != nil {
		return err
	}
	fh, err := d.openFile(name)
	if err != nil {
		return nil // unreadable files are skipped, not fatal
	}
	b, err := g.f.readOpened(fh, name)
	fh.Close()
	if err != nil {
		return nil
	}
	return g.scan(b, func() string { return joinPath(g.dirs, name) })
}

// scan adds the lines of b that match, named by what name returns; it is
// called only for a match, so that a deep path is joined only when shown.
func (g *grepWalk) scan(b []byte, name func() string) error {
	if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return nil // binary
	}
	if g.w.bytes -= int64(len(b)); g.w.bytes < 0 {
		return g.w.stop(fmt.Sprintf("stopped early after reading %d bytes, the limit", maxGrepBytes))
	}
	var shown string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !g.re.MatchString(line) {
			continue
		}
		if len(g.out) == g.f.maxResults {
			return g.w.stop(fmt.Sprintf("stopped early at %d matches, the limit", g.f.maxResults))
		}
		if len(line) > maxGrepLine {
			line = strings.ToValidUTF8(line[:maxGrepLine], "") + "…"
		}
		if shown == "" {
			shown = name()
		}
		g.out = append(g.out, fmt.Sprintf("%s:%d: %s", shown, n, line))
	}
	return nil
}
