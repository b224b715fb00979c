package builtin

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Defaults of a Files, changed with its options.
const (
	defaultMaxFileBytes   = 256 << 10 // bytes read or written by one call
	defaultMaxFileResults = 200       // lines returned by list_files, glob and grep
	maxWalkEntries        = 100_000   // entries one glob or grep may visit
	maxWalkDepth          = 10_000    // directories one glob or grep may go down
	maxGrepBytes          = 64 << 20  // bytes one grep may read
	maxGrepLine           = 240       // bytes of a matching line shown by grep
)

// errOutsideRoot marks a path refused because it leads out of the root.
var errOutsideRoot = errors.New("the path leads outside the workspace")

// Files gives the model a directory to work in: its exported methods are the
// tools read_file, write_file, list_files, glob, grep and delete_file. Every
// path is relative to the root given to NewFiles; paths that are absolute, use
// .. to climb above the root, or pass through a symbolic link that points out
// of it are refused, so nothing outside the root can be read or changed. It is
// safe for concurrent use. Close releases the root directory.
type Files struct {
	root       *os.Root
	maxBytes   int64
	maxResults int
}

// FilesOption configures a Files; see MaxFileBytes and MaxFileResults.
type FilesOption func(*Files)

// MaxFileBytes caps the size of a file that read_file returns, write_file
// writes or grep searches (default 256 KiB). Larger files are refused with an
// error that tells the model what to do instead.
func MaxFileBytes(n int64) FilesOption {
	return func(f *Files) {
		if n > 0 {
			f.maxBytes = n
		}
	}
}

// MaxFileResults caps the lines that list_files, glob and grep return
// (default 200); what is cut is reported in the last line.
func MaxFileResults(n int) FilesOption {
	return func(f *Files) {
		if n > 0 {
			f.maxResults = n
		}
	}
}

// NewFiles confines the file tools to the directory root, which must exist.
// Close the Files when done (an agent given it through onion.ToolsFrom closes
// it when the agent is closed).
func NewFiles(root string, opts ...FilesOption) (*Files, error) {
	if root == "" {
		return nil, errors.New("files: root is empty: give a directory, such as \".\"")
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("files: open root: %w", err)
	}
	f := &Files{root: r, maxBytes: defaultMaxFileBytes, maxResults: defaultMaxFileResults}
	for _, o := range opts {
		o(f)
	}
	return f, nil
}

// Close releases the root directory; the tools fail after it.
func (f *Files) Close() error {
	return f.root.Close()
}

// ReadFile returns the whole content of a text file. Files over the size
// limit are refused: grep them for the lines you need instead.
//
// path: the file, relative to the workspace root, such as "src/main.go"
//
//onion:intent read
func (f *Files) ReadFile(path string) (string, error) {
	p, err := f.clean("read", path, false)
	if err != nil {
		return "", err
	}
	fi, err := f.root.Stat(p)
	if err != nil {
		return "", f.fail("read", p, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("files: read %s: is a directory: call list_files to see what it holds", p)
	}
	b, err := f.readCapped(p)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", fmt.Errorf("files: read %s: the file is binary: only text files can be read", p)
	}
	return string(b), nil
}

// readCapped reads the regular file at the clean path p, failing if it
// holds more than f.maxBytes. Anything else — a named pipe, a device, a
// socket — is refused without reading: a pipe with no writer would block
// the call forever. The file is opened without blocking and then checked,
// so that what is read is what was checked, even if the path was swapped
// in between.
func (f *Files) readCapped(p string) ([]byte, error) {
	if fi, err := f.root.Stat(p); err != nil {
		return nil, f.fail("read", p, err)
	} else if !fi.Mode().IsRegular() {
		return nil, notRegular(p, fi.Mode())
	}
	fh, err := f.root.OpenFile(p, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, f.fail("read", p, err)
	}
	defer fh.Close()
	return f.readOpened(fh, p)
}

// readOpened reads fh, opened from the path p, if it is a regular file of
// at most f.maxBytes.
func (f *Files) readOpened(fh *os.File, p string) ([]byte, error) {
	fi, err := fh.Stat()
	if err != nil {
		return nil, f.fail("read", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(p, fi.Mode())
	}
	if fi.Size() > f.maxBytes {
		return nil, fmt.Errorf("files: read %s: the file is %s, over the limit of %d: call grep to find the lines you need", filepath.ToSlash(p), byteCount(fi.Size()), f.maxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(fh, f.maxBytes+1))
	if err != nil {
		return nil, f.fail("read", p, err)
	}
	if int64(len(b)) > f.maxBytes {
		return nil, fmt.Errorf("files: read %s: the file is over the limit of %d bytes: call grep to find the lines you need", filepath.ToSlash(p), f.maxBytes)
	}
	return b, nil
}

// notRegular is the error for reading something that is not a file.
func notRegular(p string, mode fs.FileMode) error {
	what := "is not a regular file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		what = "is a named pipe, not a regular file"
	case mode&fs.ModeSocket != 0:
		what = "is a socket, not a regular file"
	case mode&fs.ModeDevice != 0:
		what = "is a device, not a regular file"
	}
	return fmt.Errorf("files: read %s: %s: only regular files can be read", filepath.ToSlash(p), what)
}

// WriteFile creates a file or replaces its whole content, creating missing
// parent directories. The new content appears at once, never half-written.
//
// path: the file, relative to the workspace root, such as "notes/plan.md"
// content: the complete new content of the file
//
//onion:idempotent
func (f *Files) WriteFile(path, content string) (string, error) {
	p, err := f.clean("write", path, false)
	if err != nil {
		return "", err
	}
	if int64(len(content)) > f.maxBytes {
		return "", fmt.Errorf("files: write %s: the content is %s, over the limit of %d: split it across several files", p, byteCount(int64(len(content))), f.maxBytes)
	}
	var keep fs.FileMode // the mode of the file replaced, if any
	switch fi, err := f.root.Stat(p); {
	case err == nil && fi.IsDir():
		return "", fmt.Errorf("files: write %s: is a directory: give a file path inside it", p)
	case err == nil:
		keep = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return "", f.fail("write", p, err)
	}
	dir := filepath.Dir(p)
	if dir != "." {
		if err := f.root.MkdirAll(dir, 0o755); err != nil {
			return "", f.fail("write", p, err)
		}
	}
	if err := f.writeAtomic(p, dir, []byte(content), keep); err != nil {
		return "", f.fail("write", p, err)
	}
	return fmt.Sprintf("wrote %s to %s", byteCount(int64(len(content))), filepath.ToSlash(p)), nil
}

// writeAtomic writes data to a new temporary file in dir and renames it over
// p, all through the root so that neither step can leave it. A new file gets
// 0644 less the umask; a replaced one keeps its mode keep.
func (f *Files) writeAtomic(p, dir string, data []byte, keep fs.FileMode) (err error) {
	var (
		tmp string
		fh  *os.File
	)
	for range 10 {
		tmp = filepath.Join(dir, "."+filepath.Base(p)+".tmp-"+rand.Text()[:12])
		fh, err = f.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			fh.Close()
			f.root.Remove(tmp)
		}
	}()
	if _, err = fh.Write(data); err != nil {
		return err
	}
	if keep != 0 {
		if err = fh.Chmod(keep); err != nil {
			return err
		}
	}
	if err = fh.Sync(); err != nil {
		return err
	}
	if err = fh.Close(); err != nil {
		return err
	}
	return f.root.Rename(tmp, p)
}

// ListFiles lists a directory: one entry a line, directories ending in "/",
// files with their size in bytes.
//
// path: the directory, relative to the workspace root; "" or "." for the root itself
//
//onion:intent read
func (f *Files) ListFiles(path string) (string, error) {
	p, err := f.clean("list", path, true)
	if err != nil {
		return "", err
	}
	fi, err := f.root.Stat(p)
	if err != nil {
		return "", f.fail("list", p, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("files: list %s: is a file, not a directory: call read_file to read it", p)
	}
	entries, err := fs.ReadDir(f.root.FS(), filepath.ToSlash(p))
	if err != nil {
		return "", f.fail("list", p, err)
	}
	if len(entries) == 0 {
		return "(empty directory)", nil
	}
	var b strings.Builder
	for i, e := range entries {
		if i == f.maxResults {
			fmt.Fprintf(&b, "... %d more entries not shown: call glob with a narrower pattern", len(entries)-i)
			break
		}
		switch {
		case e.IsDir():
			fmt.Fprintf(&b, "%s/\n", e.Name())
		case e.Type()&fs.ModeSymlink != 0:
			fmt.Fprintf(&b, "%s (symbolic link)\n", e.Name())
		default:
			if info, err := e.Info(); err == nil {
				fmt.Fprintf(&b, "%s (%s)\n", e.Name(), byteCount(info.Size()))
			} else {
				fmt.Fprintf(&b, "%s\n", e.Name())
			}
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// DeleteFile deletes a file, or a directory that is empty.
//
// path: the file or empty directory, relative to the workspace root
//
//onion:intent delete
func (f *Files) DeleteFile(path string) (string, error) {
	p, err := f.clean("delete", path, false)
	if err != nil {
		return "", err
	}
	if p == "." {
		return "", errors.New("files: delete: refusing to delete the workspace root: name a file inside it")
	}
	if err := f.root.Remove(p); err != nil {
		if fi, serr := f.root.Lstat(p); serr == nil && fi.IsDir() {
			return "", fmt.Errorf("files: delete %s: the directory is not empty: delete the files in it first", p)
		}
		return "", f.fail("delete", p, err)
	}
	return "deleted " + filepath.ToSlash(p), nil
}

// clean checks a path the model gave and returns it cleaned. It refuses what
// os.Root would refuse anyway, but with an error the model can act on.
func (f *Files) clean(op, p string, emptyIsRoot bool) (string, error) {
	if p == "" {
		if emptyIsRoot {
			return ".", nil
		}
		return "", fmt.Errorf("files: %s: path is empty: give a path relative to the workspace root, such as \"notes.md\"", op)
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("files: %s %s: %w: the path is absolute: give it relative to the workspace root, such as \"src/main.go\"", op, p, errOutsideRoot)
	}
	c := filepath.Clean(p)
	if !filepath.IsLocal(c) {
		return "", fmt.Errorf("files: %s %s: %w: .. climbs above the root: only files under it can be used", op, p, errOutsideRoot)
	}
	return c, nil
}

// fail turns an error from the root into one the model can act on: a plain
// sentence, without the system call that failed ("statat", "openat"), which
// errors.Is and errors.As still find underneath.
func (f *Files) fail(op, p string, err error) error {
	p = filepath.ToSlash(p)
	var pe *fs.PathError
	switch {
	// os has no exported error for this; its text is stable since Go 1.24.
	case errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent":
		return fmt.Errorf("files: %s %s: %w through a symbolic link: only files under the root can be used", op, p, errOutsideRoot)
	case errors.Is(err, fs.ErrNotExist):
		return &fileError{fmt.Sprintf("files: %s %s: no such file or directory: call list_files or glob to find the right path", op, p), err}
	case errors.Is(err, fs.ErrPermission):
		return &fileError{fmt.Sprintf("files: %s %s: permission denied", op, p), err}
	}
	why := err.Error()
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		why = pe.Err.Error()
	case errors.As(err, &le):
		why = le.Err.Error()
	}
	return &fileError{fmt.Sprintf("files: %s %s: %s", op, p, why), err}
}

// fileError is an error of the file tools whose text is written for the
// model; err is the cause, for errors.Is and errors.As.
type fileError struct {
	msg string
	err error
}

func (e *fileError) Error() string { return e.msg }
func (e *fileError) Unwrap() error { return e.err }

// byteCount says n bytes in words: "1 byte", "7 bytes".
func byteCount(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
