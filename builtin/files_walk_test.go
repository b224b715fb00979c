package builtin

import "testing"

// TestFilesGrepOrder checks that grep gives its lines in the order of
// their paths, and keeps the first ones under its cap, also for the files
// after a directory's last subdirectory, which it reads before going down
// so as to close the directory first.
func TestFilesGrepOrder(t *testing.T) {
	files := map[string]string{
		"a.txt": "hit\n", "b/c.txt": "hit\nhit\n", "b/d/e.txt": "hit\n", "b/f.txt": "hit\n", "z.txt": "hit\n",
	}
	tests := []struct {
		max  int
		want string
	}{
		{10, "a.txt:1: hit\nb/c.txt:1: hit\nb/c.txt:2: hit\nb/d/e.txt:1: hit\nb/f.txt:1: hit\nz.txt:1: hit"},
		{4, "a.txt:1: hit\nb/c.txt:1: hit\nb/c.txt:2: hit\nb/d/e.txt:1: hit\n... stopped early at 4 matches, the limit, more matches may exist: narrow the pattern or the path"},
		{5, "a.txt:1: hit\nb/c.txt:1: hit\nb/c.txt:2: hit\nb/d/e.txt:1: hit\nb/f.txt:1: hit\n... stopped early at 5 matches, the limit, more matches may exist: narrow the pattern or the path"},
	}
	for _, tt := range tests {
		f, _ := newTestFiles(t, files, MaxFileResults(tt.max))
		if got, err := f.Grep(t.Context(), "hit", ""); err != nil || got != tt.want {
			t.Errorf("MaxFileResults(%d): Grep = %q, %v; want %q", tt.max, got, err, tt.want)
		}
	}
}
