//go:build unix

package builtin

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// walkDir is a directory open for a walk. Its entries are opened and looked
// at relative to its handle, without following symbolic links, so that
// each costs one system call at any depth and none leads out of it.
type walkDir struct {
	f *os.File
}

// openWalkStart opens the directory p, a clean path under the root, where
// a walk starts. It opens only a directory: a named pipe swapped in since
// it was checked fails instead of blocking.
func openWalkStart(r *os.Root, p string) (*walkDir, error) {
	fh, err := r.OpenFile(p, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &walkDir{fh}, nil
}

// names returns up to n more names of entries in d; io.EOF after the last.
func (d *walkDir) names(n int) ([]string, error) { return d.f.Readdirnames(n) }

// lstat returns the type of the entry name in d, not following a symbolic
// link.
func (d *walkDir) lstat(name string) (fs.FileMode, error) {
	var st unix.Stat_t
	err := ignoringEINTR(func() error { return unix.Fstatat(int(d.f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	if err != nil {
		return 0, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir, nil
	case unix.S_IFREG:
		return 0, nil
	case unix.S_IFLNK:
		return fs.ModeSymlink, nil
	}
	return fs.ModeIrregular, nil
}

// openDir opens the directory name in d; a symbolic link fails.
func (d *walkDir) openDir(name string) (*walkDir, error) {
	fh, err := d.openat(name, unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return &walkDir{fh}, nil
}

// openFile opens the entry name in d for reading, without blocking on a
// named pipe; a symbolic link fails. The caller checks what it opened.
func (d *walkDir) openFile(name string) (*os.File, error) {
	return d.openat(name, unix.O_NONBLOCK)
}

func (d *walkDir) openat(name string, flags int) (*os.File, error) {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|flags, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// Close closes the directory.
func (d *walkDir) Close() error { return d.f.Close() }

// ignoringEINTR calls fn again while it fails with EINTR, as package os
// does for its own system calls.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}
