//go:build linux

package commandinit

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// Name is the name this program is run under as a command's init; no
// program is started under it by anything else.
const Name = "onion-run-command-init"

// The first argument after Name: whether to mount a /proc. Only a process
// in a mount and PID namespace of its own does.
const (
	MountProc = "mount-proc"
	KeepProc  = "keep-proc"
)

func init() {
	if len(os.Args) == 3 && os.Args[0] == Name {
		// Not os.Exit: this process has nothing to flush, and a binary
		// built with -race would linger a second in it on success.
		syscall.Exit(containInit(os.Args[1] == MountProc, os.Args[2]))
	}
}

// containInit is the whole life of a command's init; it returns the exit
// code. Failing to mount /proc is not fatal: where the kernel refuses it (in
// a user namespace, under a /proc that has parts masked) the command sees
// the host's, and the kernel keeps a process of a child user namespace
// from reading the environment of any process outside it. Failing to drop
// privileges is fatal: the command is not run.
func containInit(mountProc bool, command string) int {
	// Capabilities and no_new_privs belong to a thread; the command is
	// forked from this one, and this goroutine stays on it.
	runtime.LockOSThread()
	if mountProc {
		syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	}
	if err := dropPrivileges(); err != nil {
		fmt.Fprintf(os.Stderr, "run_command: the command was not run: %v\n", err)
		return 126
	}
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", command}, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "run_command: starting /bin/sh: %v\n", err)
		return 127
	}
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			fmt.Fprintf(os.Stderr, "run_command: waiting for the command: %v\n", err)
			return 126
		case got == pid && ws.Signaled():
			return 128 + int(ws.Signal())
		case got == pid && ws.Exited():
			return ws.ExitStatus()
		}
	}
}

// Values of linux/prctl.h and linux/capability.h, the same on every
// architecture; package syscall lacks some of them.
const (
	prSetDumpable         = 4
	prCapbsetDrop         = 24
	prSetNoNewPrivs       = 38
	prCapAmbient          = 47
	prCapAmbientClearAll  = 4
	linuxCapabilityV3     = 0x20080522
	capabilityMaxPossible = 64 // beyond CAP_LAST_CAP of any kernel; the kernel says where it stops
)

// dropPrivileges leaves this thread, and whatever it starts, without any
// capability in any set and unable to gain one: no_new_privs makes exec
// give no more than the thread has (setuid bits and file capabilities
// included), and it has nothing. It also makes this process unreadable
// through /proc by the command (no /proc/1/environ, fd or mem), since the
// command runs as the same user.
func dropPrivileges() error {
	if err := prctl(prSetDumpable, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	if err := prctl(prSetNoNewPrivs, 1); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	// Without CAP_SETPCAP (a user who is not root, with no namespace)
	// the bounding set stays as it is: with no_new_privs and empty sets,
	// exec raises nothing from it.
	for c := range uintptr(capabilityMaxPossible) {
		err := prctl(prCapbsetDrop, c)
		if err == syscall.EINVAL || err == syscall.EPERM {
			break // past the kernel's last capability, or not ours to drop
		}
		if err != nil {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := prctl(prCapAmbient, prCapAmbientClearAll); err != nil && err != syscall.EINVAL {
		return fmt.Errorf("clearing the ambient capabilities: %w", err)
	}
	header := struct {
		version uint32
		pid     int32
	}{version: linuxCapabilityV3}
	var sets [2]struct{ effective, permitted, inheritable uint32 } // all empty
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&header)), uintptr(unsafe.Pointer(&sets[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	return nil
}

// prctl calls prctl(2) with one argument, on this thread.
func prctl(option, arg uintptr) error {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, option, arg, 0, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}
