package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion"
)

// newTestFiles returns a Files over a fresh directory holding the given
// files (path → content), and the directory.
func newTestFiles(t testing.TB, files map[string]string, opts ...FilesOption) (*Files, string) {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := NewFiles(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, dir
}

func TestFilesTools(t *testing.T) {
	f, dir := newTestFiles(t, map[string]string{"a.txt": "hello\nworld\n", "src/main.go": "package main\n"})
	tools := toolsByName(t, f)
	want := map[string]onion.Intent{
		"read_file": onion.Read, "write_file": onion.Write, "list_files": onion.Read,
		"glob": onion.Read, "grep": onion.Read, "delete_file": onion.Delete,
	}
	if len(tools) != len(want) {
		t.Errorf("got %d tools, want %d", len(tools), len(want))
	}
	for name, intent := range want {
		if tool := tools[name]; tool == nil || tool.Intent() != intent {
			t.Errorf("tool %s: missing or intent not %s", name, intent)
		}
	}

	if got := call(t, tools, "read_file", `{"path":"a.txt"}`); got != "hello\nworld\n" {
		t.Errorf("read_file = %q", got)
	}
	if got := call(t, tools, "write_file", `{"path":"notes/plan.md","content":"# plan\n"}`); got != "wrote 7 bytes to notes/plan.md" {
		t.Errorf("write_file = %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes", "plan.md")); string(b) != "# plan\n" {
		t.Errorf("written file holds %q", b)
	}
	if got := call(t, tools, "list_files", `{"path":""}`); got != "a.txt (12 bytes)\nnotes/\nsrc/" {
		t.Errorf("list_files = %q", got)
	}
	if got := call(t, tools, "delete_file", `{"path":"a.txt"}`); got != "deleted a.txt" {
		t.Errorf("delete_file = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a.txt still there: %v", err)
	}
	assertNoTempFiles(t, filepath.Join(dir, "notes"))
}

func TestFilesWriteReplaces(t *testing.T) {
	f, dir := newTestFiles(t, map[string]string{"run.sh": "old"})
	os.Chmod(filepath.Join(dir, "run.sh"), 0o750)
	if _, err := f.WriteFile("run.sh", "new"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v, want the old 0750 kept", fi.Mode().Perm())
	}
	if got, _ := f.ReadFile("run.sh"); got != "new" {
		t.Errorf("content = %q", got)
	}
	assertNoTempFiles(t, dir)
}

func TestFilesRefusesEscapes(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	f, dir := newTestFiles(t, map[string]string{"in.txt": "in"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "abs-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out-dir")); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, outside)
	if err := os.Symlink(rel, filepath.Join(dir, "rel-dir")); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret.txt")
	tests := []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"read dotdot", func() (string, error) { return f.ReadFile("../" + filepath.Base(outside) + "/secret.txt") }, ".. climbs above the root"},
		{"read nested dotdot", func() (string, error) { return f.ReadFile("a/../../x") }, ".. climbs above the root"},
		{"read absolute", func() (string, error) { return f.ReadFile(secret) }, "the path is absolute"},
		{"read symlink to file", func() (string, error) { return f.ReadFile("abs-link") }, "through a symbolic link"},
		{"read through symlinked dir", func() (string, error) { return f.ReadFile("out-dir/secret.txt") }, "through a symbolic link"},
		{"read through relative symlink", func() (string, error) { return f.ReadFile("rel-dir/secret.txt") }, "through a symbolic link"},
		{"write dotdot", func() (string, error) { return f.WriteFile("../x.txt", "x") }, ".. climbs above the root"},
		{"write absolute", func() (string, error) { return f.WriteFile(filepath.Join(outside, "x.txt"), "x") }, "the path is absolute"},
		{"write symlink", func() (string, error) { return f.WriteFile("abs-link", "pwned") }, "through a symbolic link"},
		{"write through symlinked dir", func() (string, error) { return f.WriteFile("rel-dir/new.txt", "x") }, "through a symbolic link"},
		{"list outside", func() (string, error) { return f.ListFiles("out-dir") }, "through a symbolic link"},
		{"list dotdot", func() (string, error) { return f.ListFiles("..") }, ".. climbs above the root"},
		{"glob dotdot", func() (string, error) { return f.Glob(t.Context(), "../*") }, ".. climbs above the root"},
		{"glob absolute", func() (string, error) { return f.Glob(t.Context(), "/etc/*") }, "the path is absolute"},
		{"grep outside", func() (string, error) { return f.Grep(t.Context(), "secret", "rel-dir") }, "through a symbolic link"},
		{"delete dotdot", func() (string, error) { return f.DeleteFile("../" + filepath.Base(outside) + "/secret.txt") }, ".. climbs above the root"},
		{"delete absolute", func() (string, error) { return f.DeleteFile(secret) }, "the path is absolute"},
		{"delete through symlinked dir", func() (string, error) { return f.DeleteFile("out-dir/secret.txt") }, "through a symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.run()
			if !errors.Is(err, errOutsideRoot) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, %v; want an error saying %q", out, err, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Errorf("outside file changed: %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside dir holds %d entries, want 1", len(entries))
	}
	// Searches skip what lies outside instead of reading it.
	if got, err := f.Grep(t.Context(), "secret", ""); err != nil || strings.Contains(got, "secret.txt") {
		t.Errorf("grep everything = %q, %v", got, err)
	}
	if got, err := f.Glob(t.Context(), "**/secret.txt"); err != nil || strings.Contains(got, "out-dir/secret.txt") {
		t.Errorf("glob = %q, %v", got, err)
	}
}

func TestFilesInsideSymlinkAndDotDot(t *testing.T) {
	f, dir := newTestFiles(t, map[string]string{"real/a.txt": "a"})
	os.Symlink("real", filepath.Join(dir, "alias"))
	if got, err := f.ReadFile("alias/a.txt"); got != "a" || err != nil {
		t.Errorf("read through a link inside the root = %q, %v", got, err)
	}
	if got, err := f.ReadFile("real/../real/a.txt"); got != "a" || err != nil {
		t.Errorf("read with .. that stays inside = %q, %v", got, err)
	}
}

func TestFilesSizeLimits(t *testing.T) {
	f, dir := newTestFiles(t, map[string]string{"big.txt": strings.Repeat("x", 101), "ok.txt": strings.Repeat("x", 100)}, MaxFileBytes(100))
	if _, err := f.ReadFile("big.txt"); err == nil || !strings.Contains(err.Error(), "101 bytes, over the limit of 100") {
		t.Errorf("oversize read: %v", err)
	}
	if got, err := f.ReadFile("ok.txt"); len(got) != 100 || err != nil {
		t.Errorf("read at the limit = %d bytes, %v", len(got), err)
	}
	if _, err := f.WriteFile("new.txt", strings.Repeat("y", 101)); err == nil || !strings.Contains(err.Error(), "over the limit of 100") {
		t.Errorf("oversize write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("oversize write left a file: %v", err)
	}
	if got, _ := f.Grep(t.Context(), "x", ""); strings.Contains(got, "big.txt") || !strings.Contains(got, "ok.txt:1:") {
		t.Errorf("grep = %q, want ok.txt only", got)
	}
}

func TestFilesBadInput(t *testing.T) {
	f, _ := newTestFiles(t, map[string]string{"bin": "a\x00b", "dir/x.txt": "x"})
	tests := []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"read empty path", func() (string, error) { return f.ReadFile("") }, "path is empty"},
		{"read missing", func() (string, error) { return f.ReadFile("nope.txt") }, "no such file or directory: call list_files or glob"},
		{"read dir", func() (string, error) { return f.ReadFile("dir") }, "is a directory"},
		{"read binary", func() (string, error) { return f.ReadFile("bin") }, "binary"},
		{"write dir", func() (string, error) { return f.WriteFile("dir", "x") }, "is a directory"},
		{"list file", func() (string, error) { return f.ListFiles("bin") }, "is a file"},
		{"list missing", func() (string, error) { return f.ListFiles("nope") }, "no such file"},
		{"glob empty", func() (string, error) { return f.Glob(t.Context(), "") }, "pattern is empty"},
		{"glob bad", func() (string, error) { return f.Glob(t.Context(), "[a") }, "syntax error in pattern"},
		{"grep bad regexp", func() (string, error) { return f.Grep(t.Context(), "(", "") }, "bad regular expression"},
		{"grep empty", func() (string, error) { return f.Grep(t.Context(), "", "") }, "pattern is empty"},
		{"grep missing path", func() (string, error) { return f.Grep(t.Context(), "x", "nope") }, "no such file"},
		{"delete root", func() (string, error) { return f.DeleteFile(".") }, "refusing to delete the workspace root"},
		{"delete full dir", func() (string, error) { return f.DeleteFile("dir") }, "not empty"},
		{"delete missing", func() (string, error) { return f.DeleteFile("nope") }, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, %v; want an error containing %q", out, err, tt.want)
			}
		})
	}
	if _, err := NewFiles(""); err == nil {
		t.Error("NewFiles(\"\") succeeded")
	}
	if _, err := NewFiles(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("NewFiles of a missing directory succeeded")
	}
}

func TestFilesGlob(t *testing.T) {
	f, _ := newTestFiles(t, map[string]string{
		"main.go": "", "main_test.go": "", "README.md": "",
		"pkg/a.go": "", "pkg/deep/b.go": "", "pkg/deep/c.txt": "", ".git/x.go": "",
	})
	tests := []struct{ pattern, want string }{
		{"*.go", "main.go\nmain_test.go"},
		{"pkg/*.go", "pkg/a.go"},
		{"**/*.go", "main.go\nmain_test.go\npkg/a.go\npkg/deep/b.go"},
		{"pkg/**", "pkg\npkg/a.go\npkg/deep\npkg/deep/b.go\npkg/deep/c.txt"},
		{"**/deep/*", "pkg/deep/b.go\npkg/deep/c.txt"},
		{"*.rs", `no files match "*.rs"`},
	}
	for _, tt := range tests {
		got, err := f.Glob(t.Context(), tt.pattern)
		if err != nil || got != tt.want {
			t.Errorf("Glob(%q) = %q, %v; want %q", tt.pattern, got, err, tt.want)
		}
	}
}

func TestFilesGrep(t *testing.T) {
	f, _ := newTestFiles(t, map[string]string{
		"a.go":       "package a\n\nfunc One() {}\nfunc two() {}\n",
		"sub/b.go":   "package b\r\nfunc Three() {}\r\n",
		"long.txt":   "func " + strings.Repeat("y", 500) + "\n",
		".git/c.go":  "func Hidden() {}\n",
		"binary.bin": "func\x00\n",
	})
	got, err := f.Grep(t.Context(), `^func [A-Z]`, "")
	if want := "a.go:3: func One() {}\nsub/b.go:2: func Three() {}"; err != nil || got != want {
		t.Errorf("Grep = %q, %v; want %q", got, err, want)
	}
	if got, _ := f.Grep(t.Context(), `Three`, "sub/b.go"); got != "sub/b.go:2: func Three() {}" {
		t.Errorf("Grep in one file = %q", got)
	}
	if got, _ := f.Grep(t.Context(), `yyy`, "long.txt"); len(got) > maxGrepLine+50 || !strings.HasSuffix(got, "…") {
		t.Errorf("long line not shortened: %d bytes", len(got))
	}
	if got, _ := f.Grep(t.Context(), `nothing`, "sub"); got != `no matches for "nothing" in sub` {
		t.Errorf("no match = %q", got)
	}
}

func TestFilesResultCap(t *testing.T) {
	files := map[string]string{"many.txt": strings.Repeat("match\n", 10)}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		files[n+".md"] = ""
	}
	f, _ := newTestFiles(t, files, MaxFileResults(3))
	got, _ := f.Grep(t.Context(), "match", "many.txt")
	if lines := strings.Split(got, "\n"); len(lines) != 4 || !strings.Contains(lines[3], "stopped early") {
		t.Errorf("capped grep = %q", got)
	}
	got, _ = f.Glob(t.Context(), "*.md")
	if lines := strings.Split(got, "\n"); len(lines) != 4 || lines[3] != "... 2 more matches not shown: narrow the pattern" {
		t.Errorf("capped glob = %q", got)
	}
	got, _ = f.ListFiles(".")
	if lines := strings.Split(got, "\n"); len(lines) != 4 || !strings.HasPrefix(lines[3], "... 3 more entries") {
		t.Errorf("capped list = %q", got)
	}
}

func TestFilesErrorThroughTool(t *testing.T) {
	f, _ := newTestFiles(t, nil)
	_, err := toolsByName(t, f)["read_file"].Call(context.Background(), `{"path":"../etc/passwd"}`)
	if !errors.Is(err, errOutsideRoot) {
		t.Errorf("read_file outside via Call: %v", err)
	}
}

// TestFilesPlainMessages checks that what the model reads is plain
// sentences: no system call names from the os package ("statat",
// "removeat"), and "1 byte", not "1 bytes".
func TestFilesPlainMessages(t *testing.T) {
	f, _ := newTestFiles(t, map[string]string{"full/a.txt": "x"})
	tools := toolsByName(t, f)
	tests := []struct {
		tool, args string
		want       string // the whole text the model reads
	}{
		{"read_file", `{"path":"missing.txt"}`, "files: read missing.txt: no such file or directory: call list_files or glob to find the right path"},
		{"list_files", `{"path":"nope"}`, "files: list nope: no such file or directory: call list_files or glob to find the right path"},
		{"grep", `{"pattern":"x","path":"nope"}`, "files: grep nope: no such file or directory: call list_files or glob to find the right path"},
		{"delete_file", `{"path":"missing.txt"}`, "files: delete missing.txt: no such file or directory: call list_files or glob to find the right path"},
		{"write_file", `{"path":"full/a.txt/b.txt","content":"x"}`, "files: write full/a.txt/b.txt: not a directory"},
		{"write_file", `{"path":"one.txt","content":"x"}`, "wrote 1 byte to one.txt"},
		{"list_files", `{"path":"full"}`, "a.txt (1 byte)"},
	}
	for _, tt := range tests {
		got, err := tools[tt.tool].Call(t.Context(), tt.args)
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s %s = %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
	// The cause is still there for programs.
	if _, err := f.ReadFile("missing.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want it to wrap fs.ErrNotExist", err)
	}
}

// TestFilesGlobManyDoubleStars checks that patterns with many ** take time
// in proportion to the pattern and the tree, not exponential time: thirty
// **/ segments, together or each followed by a name, on a tree forty
// directories deep.
func TestFilesGlobManyDoubleStars(t *testing.T) {
	deep := strings.Repeat("d/", 40) + "leaf.txt"
	f, _ := newTestFiles(t, map[string]string{deep: "x", "other.txt": "y"})
	for _, pattern := range []string{
		strings.Repeat("**/", 30) + "leaf.txt",
		strings.Repeat("**/d/", 30) + "**/leaf.txt",
		strings.Repeat("**/", 30) + "nothing.txt",
	} {
		want := deep
		if strings.HasSuffix(pattern, "nothing.txt") {
			want = fmt.Sprintf("no files match %q", pattern)
		}
		got, err := f.Glob(t.Context(), pattern)
		if err != nil || got != want {
			t.Errorf("Glob(%.30s…) = %q, %v; want %q", pattern, got, err, want)
		}
	}
	if _, err := f.Glob(t.Context(), strings.Repeat("d/", maxGlobSegments)+"x"); err == nil || !strings.Contains(err.Error(), "segments, over the limit") {
		t.Errorf("Glob with %d segments: error = %v, want the limit", maxGlobSegments+1, err)
	}
}

// TestFilesWalkStopsWithContext checks that glob and grep stop when the
// call's context ends (as when the tool's timeout passes), saying so.
func TestFilesWalkStopsWithContext(t *testing.T) {
	f, _ := newTestFiles(t, map[string]string{"a/b.txt": "match", "c.txt": "match"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got, err := f.Glob(ctx, "**/*.txt"); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Glob with an ended context = %q, %v; want it stopped", got, err)
	}
	if got, err := f.Grep(ctx, "match", ""); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("Grep with an ended context = %q, %v; want it stopped", got, err)
	}
}
