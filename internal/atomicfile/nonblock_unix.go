//go:build unix

package atomicfile

import "syscall"

// openNonblock opens a named pipe without waiting for a writer, so that
// ReadFile can check what it opened before reading from it.
const openNonblock = syscall.O_NONBLOCK
