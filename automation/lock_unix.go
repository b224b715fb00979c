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
func lockStore(path string) (unlock func(), err error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("automation: lock %s: %w", path, err)
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
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
