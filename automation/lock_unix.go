//go:build unix

package automation

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockStore takes the store's lock, flock(2) on path+".lock" (the store
// itself is replaced at every change), for as long as the scheduler is
// open: two schedulers firing the same automations would run each fire
// twice. Locks of separate opens conflict, within a process too.
//
// path is the store with its symbolic links resolved (resolveStore), so
// every path to the file finds the one lock file beside it, and so does a
// bind mount of its directory (the lock is on the lock file's inode). A
// hard link would escape it: the lock file of another name is another
// file, and the rename at the first change would leave that name with a
// stale copy. So a store with more than one link is refused.
func lockStore(path string) (unlock func(), err error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("automation: lock %s: %w", path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errors.New("it is not a regular file: remove it")
		}
		return nil, fmt.Errorf("automation: lock %s: %s: %w", path, name, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, fmt.Errorf("automation: %s is open in another scheduler (%s is locked): give each scheduler its own file, or close the other first", path, name)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("automation: lock %s: %w", path, err)
	}
	unlock = func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	if fi, err := os.Lstat(path); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			unlock()
			return nil, fmt.Errorf("automation: %s has %d hard links: the scheduler replaces the file at every change, which would leave each other name with a stale copy that another scheduler could open and fire again: remove the other links, and give every scheduler this one path (a symbolic link to it is followed)", path, st.Nlink)
		}
	}
	return unlock, nil
}
