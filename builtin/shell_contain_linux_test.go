package builtin

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// skipWithoutNamespaces skips a test of what only a PID namespace
// guarantees, on a machine where none can be made.
func skipWithoutNamespaces(t *testing.T) {
	t.Helper()
	if containFrom.Load() == containProcessGroup {
		t.Skip("no PID namespace can be made here (neither as root nor in a user namespace); a process can leave the process group")
	}
}

// TestShellCommandCannotReachHostProc checks, as root and in each way of
// containing a command, that the command holds no capability with which to
// take away the /proc of its namespace or mount another, and cannot read a
// host process's environment: the agent's, the host's pid 1's, or that of
// a process the test starts with a secret of its own. In the process-group
// fallback, which shares the host's mount namespace, it only reads and
// checks the capabilities: a mount there would be the host's.
func TestShellCommandCannotReachHostProc(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the escape through /proc needs root in the command; run the tests as root (in a VM or container) to check it")
	}
	t.Setenv("OPENAI_API_KEY", "sk-agent-secret")
	victim := exec.Command("cat") // lives until its standard input closes
	victim.Env = append(os.Environ(), "VICTIM_SECRET=victim-secret")
	stdin, err := victim.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); victim.Wait() })
	pid := strconv.Itoa(victim.Process.Pid)
	readEnv := "cat /proc/" + pid + "/environ /proc/" + strconv.Itoa(os.Getpid()) + "/environ /proc/1/environ"

	for _, mode := range []struct {
		name string
		way  int32
	}{{"pid namespace", containPIDNamespace}, {"user namespace", containUserNamespace}, {"process group", containProcessGroup}} {
		t.Run(mode.name, func(t *testing.T) {
			was := containFrom.Swap(mode.way)
			t.Cleanup(func() { containFrom.Store(was) })
			tool := NewShell(ShellDir(t.TempDir()))
			// A harmless command first: an attack that fell back to the
			// process group would run in the host's mount namespace.
			if _, err := runShell(t, tool, "true"); err != nil {
				t.Fatal(err)
			}
			if got := containFrom.Load(); got != mode.way {
				t.Skipf("this machine cannot contain a command in a %s (it fell back to way %d)", mode.name, got)
			}
			attacks := []struct{ command, forbidden string }{
				{readEnv, "secret"},
				{"ls /proc/" + pid + " && echo VISIBLE", "VISIBLE"},
				{"mkdir p && mount -t proc proc p && echo MOUNTED", "MOUNTED"},
				{"umount /proc && echo UNMOUNTED", "UNMOUNTED"},
				{"umount -l /proc && echo UNMOUNTED", "UNMOUNTED"},
				{"mount -t proc proc /proc && echo MOUNTED", "MOUNTED"},
				{"umount /proc; " + readEnv, "secret"},
				{"umount -l /proc; " + readEnv, "secret"},
			}
			if mode.way == containProcessGroup {
				// The host's /proc is in sight here, and the mount
				// namespace is the host's: never try to change it, if
				// the capabilities checked below were there it would work.
				attacks = attacks[:1]
			}
			for _, tt := range attacks {
				out, err := runShell(t, tool, tt.command)
				if err != nil || strings.Contains(out, tt.forbidden) {
					t.Errorf("%s: %q, %v", tt.command, out, err)
				}
			}
			out, err := runShell(t, tool, "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status")
			for _, want := range []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
				"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1"} {
				if err != nil || !strings.Contains(out, want) {
					t.Errorf("the command's status lacks %q: %q, %v", want, out, err)
				}
			}
		})
	}
}

// TestShellFailedStartKeepsContainment checks that a command every way of
// containing fails to start (one holding a NUL byte, which the kernel
// rejects as it would any argument) leaves the way later commands are
// contained as it was, through the tool and through startContained itself.
func TestShellFailedStartKeepsContainment(t *testing.T) {
	was := containFrom.Load()
	t.Cleanup(func() { containFrom.Store(was) })
	_, err := runShell(t, NewShell(), "echo a\x00b")
	if err == nil || !strings.Contains(err.Error(), "NUL byte") {
		t.Errorf("a command holding a NUL byte: %v", err)
	}
	if _, err := startContained("echo a\x00b", func(argv ...string) *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }); err == nil {
		t.Error("startContained started a command holding a NUL byte")
	}
	if got := containFrom.Load(); got != was {
		t.Errorf("commands that could not start moved containment from way %d to %d", was, got)
	}
}
