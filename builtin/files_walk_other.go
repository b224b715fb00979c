//go:build !unix

package builtin

import (
	"errors"
	"io/fs"
	"os"
)

// walkDir is a directory open for a walk. Here it is an os.Root of its
// own, which resolves each entry from it and refuses links out of it.
type walkDir struct {
	r *os.Root
	f *os.File // the directory, open for reading its names; nil until then
}

// openWalkStart opens the directory p, a clean path under the root, where
// a walk starts.
func openWalkStart(r *os.Root, p string) (*walkDir, error) {
	sub, err := r.OpenRoot(p)
	if err != nil {
		return nil, err
	}
	return &walkDir{r: sub}, nil
}

// names returns up to n more names of entries in d; io.EOF after the last.
func (d *walkDir) names(n int) ([]string, error) {
	if d.f == nil {
		f, err := d.r.Open(".")
		if err != nil {
			return nil, err
		}
		d.f = f
	}
	return d.f.Readdirnames(n)
}

// lstat returns the type of the entry name in d, not following a symbolic
// link.
func (d *walkDir) lstat(name string) (fs.FileMode, error) {
	fi, err := d.r.Lstat(name)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Type(), nil
}

// openDir opens the directory name in d; a symbolic link fails.
func (d *walkDir) openDir(name string) (*walkDir, error) {
	if m, err := d.lstat(name); err != nil {
		return nil, err
	} else if !m.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a directory")}
	}
	return openWalkStart(d.r, name)
}

// openFile opens the entry name in d for reading. The caller checks what
// it opened.
func (d *walkDir) openFile(name string) (*os.File, error) {
	return d.r.OpenFile(name, os.O_RDONLY|openNonblock, 0)
}

// Close closes the directory.
func (d *walkDir) Close() error {
	if d.f != nil {
		d.f.Close()
	}
	return d.r.Close()
}
