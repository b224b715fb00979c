//go:build unix

package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// lockMemoryFile locks the memory file at path, exclusively to change it
// or shared to read it, and returns the func that lets go. The lock is
// flock(2) on path+".lock": the memory file itself is replaced on every
// change, so a lock on it would be on a file that is gone. Locks of
// separate opens conflict, so two Memory values of one process exclude
// each other as two processes do. With the directory missing, the error
// wraps fs.ErrNotExist.
func lockMemoryFile(path string, exclusive bool) (unlock func(), err error) {
	name := path + ".lock"
	var f *os.File
	if exclusive {
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	} else {
		f, err = os.Open(name) // flock needs no write access
		if errors.Is(err, fs.ErrNotExist) {
			// Create it, so that the file cannot change while it is
			// read; in a directory that is not ours to write, nobody
			// can change the file through a Memory either.
			f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
			if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
				return func() {}, nil
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("memory: lock %s: %w", path, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("memory: lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
