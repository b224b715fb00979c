//go:build !linux && unix

package builtin

import "testing"

// skipWithoutNamespaces skips a test of what only a PID namespace
// guarantees: outside Linux there is none.
func skipWithoutNamespaces(t *testing.T) {
	t.Helper()
	t.Skip("PID namespaces are Linux only; elsewhere a process can leave the process group")
}
