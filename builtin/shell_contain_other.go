//go:build !linux && unix

package builtin

import (
	"os/exec"
	"syscall"
)

// Outside Linux there are no PID namespaces: a command runs in a process
// group of its own, which is killed as a whole when the command returns or
// times out, but which a process can leave with setsid.
func startContained(command string, newCmd func(argv ...string) *exec.Cmd) (*exec.Cmd, error) {
	cmd := newCmd("/bin/sh", "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, cmd.Start()
}
