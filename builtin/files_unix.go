//go:build unix

package builtin

import "syscall"

// openNonblock opens a named pipe without waiting for a writer, so that
// readCapped can check what it opened before reading from it.
const openNonblock = syscall.O_NONBLOCK
