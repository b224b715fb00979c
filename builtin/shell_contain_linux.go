//go:build linux

package builtin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"

	"github.com/onionkit/onion/builtin/internal/commandinit"
)

// On Linux a command runs as the first process of a PID namespace of its
// own. When that process exits or is killed, the kernel kills every other
// process in the namespace and waits until they are gone, so nothing the
// command started survives the call: not a background job, not one that
// called setsid to leave the process group, not a daemon that forked
// twice. A namespace needs CAP_SYS_ADMIN (root); without it, a user
// namespace is tried as well, which unprivileged users get on most
// distributions; where neither can be made, the command runs in a process
// group of its own, which is killed as a whole but which a process can
// leave with setsid.
//
// That first process is this program run again as the namespace's init
// (package commandinit): it mounts a /proc of the new namespace, in a mount
// namespace of its own, so that the command sees only its own processes,
// then runs the command without any capability and unable to gain one. A
// command run by root could otherwise unmount that /proc, or mount the
// host's, and read every process's environment, the agent's keys with it.
// The command keeps its user: files it writes belong to whoever runs the
// agent, as they would without a namespace.
//
// The first process of a namespace is its init, which the kernel shields
// from signals sent inside it: a program running as init cannot kill
// itself, even abort() goes astray. So init runs the command's shell as its
// child and exits with its status.
//
// A cgroup would contain the tree as well, but needs a writable cgroup
// hierarchy, which containers often lack; PR_SET_CHILD_SUBREAPER changes
// the whole agent process (every orphan of every child becomes its
// problem) and only finds descendants by scanning /proc.

// Ways of containing a command, best first.
const (
	containPIDNamespace = iota
	containUserNamespace
	containProcessGroup
)

// containFrom is the first way to try: those before it failed once in this
// process where a later one worked, and will fail again.
var containFrom atomic.Int32

// selfExe is this program, whatever its path on disk has become since it
// started.
const selfExe = "/proc/self/exe"

// startContained starts /bin/sh -c command, with the process newCmd makes
// for the argument list it is given, in the best container this process
// may create, and returns it. A way is given up for good only once a later
// one has started: an error every way meets (a command or directory the
// kernel rejects) must not leave later commands less contained.
func startContained(command string, newCmd func(argv ...string) *exec.Cmd) (*exec.Cmd, error) {
	from := int(containFrom.Load())
	for mode := from; ; mode++ {
		proc := commandinit.MountProc
		if mode == containProcessGroup {
			proc = commandinit.KeepProc // the host's mount namespace: leave its /proc alone
		}
		cmd := newCmd(selfExe, proc, command)
		cmd.Args[0] = commandinit.Name
		cmd.SysProcAttr = containAttrs(mode)
		err := cmd.Start()
		if err == nil {
			if mode != from {
				containFrom.CompareAndSwap(int32(from), int32(mode))
			}
			return cmd, nil
		}
		if mode == containProcessGroup || !namespaceRefused(err) {
			return cmd, fmt.Errorf("starting the command's init (%s): %w", selfExe, err)
		}
	}
}

// containAttrs returns the process attributes of one way of containing.
func containAttrs(mode int) *syscall.SysProcAttr {
	// Its own process group too, so that the fallback can kill the
	// command's children with it: pgid == pid of the shell.
	attrs := &syscall.SysProcAttr{Setpgid: true}
	switch mode {
	case containPIDNamespace:
		attrs.Cloneflags = syscall.CLONE_NEWPID
		attrs.Unshareflags = syscall.CLONE_NEWNS // Go makes its mounts private
	case containUserNamespace:
		attrs.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID
		attrs.Unshareflags = syscall.CLONE_NEWNS
		attrs.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attrs.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		// The same user inside holds no capability after exec unless it is
		// root there; init needs these two, to mount /proc and to empty
		// its bounding set, and drops them before the command runs.
		attrs.AmbientCaps = []uintptr{capSysAdmin, capSetpcap}
	}
	return attrs
}

// Capability numbers of linux/capability.h.
const (
	capSetpcap  = 8
	capSysAdmin = 21
)

// namespaceRefused reports whether Start failed because the namespace could
// not be made, rather than for a reason every way would meet.
func namespaceRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS) || errors.Is(err, syscall.EACCES)
}
