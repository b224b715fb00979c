//go:build unix

package builtin

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// makeChain makes a chain of depth nested directories named d in dir, one
// system call a level (a path this long is over PATH_MAX: each level is
// made relative to the one above it), and writes the file name, holding
// "needle", into each level named in at (a level of 0 is dir itself). It
// returns the path of each file from dir, by level.
func makeChain(t testing.TB, dir string, depth int, at map[int]string) map[int]string {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[int]string{}
	for level := 0; ; level++ {
		if name, ok := at[level]; ok {
			file, err := unix.Openat(fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			unix.Write(file, []byte("needle\n"))
			unix.Close(file)
			paths[level] = strings.Repeat("d/", level) + name
		}
		if level == depth {
			break
		}
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
	return paths
}

// TestFilesWalkDeepChain checks that glob and grep find files 4,000 and
// 8,000 directories deep: each used to open every directory by its path
// from the root, one system call a level, which took minutes at 8,000.
func TestFilesWalkDeepChain(t *testing.T) {
	f, dir := newTestFiles(t, nil)
	paths := makeChain(t, dir, 8000, map[int]string{4000: "x", 8000: "y"})
	for _, name := range []string{"x", "y"} {
		want := paths[4000]
		if name == "y" {
			want = paths[8000]
		}
		if got, err := f.Glob(t.Context(), "**/"+name); err != nil || got != want {
			t.Errorf("Glob(**/%s) = %.40q…, %v; want the file %d levels down", name, got, err, strings.Count(want, "/"))
		}
	}
	got, err := f.Grep(t.Context(), "needle", "")
	// In the order of their paths: d/… sorts before x.
	if want := paths[8000] + ":1: needle\n" + paths[4000] + ":1: needle"; err != nil || got != want {
		t.Errorf("Grep(needle) = %.40q…, %v; want both files", got, err)
	}
}

// TestFilesWalkLinear checks that a walk's work grows with the number of
// entries, not with their depth times their number: a chain four times as
// deep costs about four times the allocations (a count, not a time, so
// that a busy machine cannot fail it). Opening each directory from the
// root made it about sixteen times.
func TestFilesWalkLinear(t *testing.T) {
	const short, long = 250, 1000
	walks := map[string]func(*Files) (string, error){
		"glob": func(f *Files) (string, error) { return f.Glob(t.Context(), "**/x") },
		"grep": func(f *Files) (string, error) { return f.Grep(t.Context(), "needle", "") },
	}
	allocs := map[string][2]float64{}
	for i, depth := range []int{short, long} {
		f, dir := newTestFiles(t, nil)
		makeChain(t, dir, depth, map[int]string{depth: "x"})
		for name, walk := range walks {
			a := allocs[name]
			a[i] = testing.AllocsPerRun(1, func() {
				if got, err := walk(f); err != nil || !strings.HasSuffix(got, "x") && !strings.HasSuffix(got, "needle") {
					t.Fatalf("%s at depth %d = %.40q…, %v", name, depth, got, err)
				}
			})
			allocs[name] = a
		}
	}
	for name, a := range allocs {
		ratio := a[1] / a[0]
		t.Logf("%s: %.0f allocations at depth %d, %.0f at %d: ×%.2f", name, a[0], short, a[1], long, ratio)
		if ratio > 6 {
			t.Errorf("%s: depth ×%d cost ×%.1f the allocations (%.0f, then %.0f): want about ×%d, a walk linear in its entries", name, long/short, ratio, a[0], a[1], long/short)
		}
	}
}

// TestFilesWalkHeldOpenCap checks that a tree that would make a walk hold
// more than maxWalkOpen directories open at once — a chain with a second
// directory at each level, which the walk must come back to — is cut below
// that depth with a note, while a plain chain deeper than that is not.
func TestFilesWalkHeldOpenCap(t *testing.T) {
	f, dir := newTestFiles(t, nil)
	depth := maxWalkOpen + 10
	makeChain(t, dir, depth, map[int]string{depth: "x"})
	for level := range depth {
		if err := os.Mkdir(dir+"/"+strings.Repeat("d/", level)+"e", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	note := fmt.Sprintf("... left out directories nested over %d deep, the limit, more matches may exist", maxWalkOpen-1)
	for _, walk := range []func() (string, error){
		func() (string, error) { return f.Glob(t.Context(), "**/x") },
		func() (string, error) { return f.Grep(t.Context(), "needle", "") },
	} {
		if got, err := walk(); err != nil || !strings.HasPrefix(got, note) {
			t.Errorf("walk of a comb %d deep = %.60q…, %v; want only the note %q", depth, got, err, note)
		}
	}
}

// BenchmarkFilesWalkDeep measures glob and grep over a chain of 1,000
// nested directories, the shape that made walks quadratic.
func BenchmarkFilesWalkDeep(b *testing.B) {
	f, dir := newTestFiles(b, nil)
	makeChain(b, dir, 1000, map[int]string{1000: "x"})
	b.Run("glob", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Glob(b.Context(), "**/x"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("grep", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Grep(b.Context(), "needle", ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}
