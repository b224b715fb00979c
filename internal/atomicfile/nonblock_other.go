//go:build !unix

package atomicfile

// openNonblock is 0 where there are no named pipes to wait on.
const openNonblock = 0
