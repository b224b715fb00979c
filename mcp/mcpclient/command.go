package mcpclient

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// closeGrace is how long a stdio server may take to exit once its stdin is
// closed, and then once it is asked to terminate, before it and every
// process it started are killed.
const closeGrace = 400 * time.Millisecond

// commandTransport runs a stdio MCP server in a process group of its own,
// so that closing the session ends the server and everything it started
// (npx's node, a shell's children), not only the process it ran.
type commandTransport struct {
	cmd  *exec.Cmd
	proc *process // set by Connect
}

// Connect implements mcp.Transport.
func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cmd := t.cmd
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// Not StdoutPipe: cmd.Wait closes that pipe when the server exits,
	// which could lose the last messages it wrote.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	stdin, err := cmd.StdinPipe()
	if err != nil {
		stdout.Close()
		w.Close()
		return nil, err
	}
	err = cmd.Start()
	w.Close() // the server holds its own copy
	if err != nil {
		stdout.Close()
		return nil, err
	}
	out := &output{f: stdout, drained: make(chan struct{})}
	p := &process{cmd: cmd, stdin: stdin, out: out, exited: make(chan struct{})}
	t.proc = p
	// Owned by the process: it ends when the server does, which Close
	// makes sure of and waits for.
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return (&mcp.IOTransport{Reader: out, Writer: p}).Connect(ctx)
}

// process is a running stdio server: writing to it writes its stdin, and
// closing it ends it.
type process struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	out     *output
	exited  chan struct{} // closed when the server has exited
	waitErr error         // cmd.Wait's, set before exited is closed
	killed  atomic.Bool   // Close has signaled the server: its end is Close's doing
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close ends the server as the MCP spec says a client should: it closes
// its stdin, waits, sends SIGTERM, waits, and sends SIGKILL, each signal
// to the whole process group; once the server is gone, whatever it left
// behind in its group is killed too. A server that exits when asked is a
// normal close, and no error, whatever its exit status.
func (p *process) Close() error {
	_ = p.stdin.Close()
	pgid := p.cmd.Process.Pid
	ended := p.wait(closeGrace)
	if !ended {
		p.killed.Store(true)
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		ended = p.wait(closeGrace)
	}
	// Whatever is left in the group has lost its server: end it, and let
	// the last of them that held the server's stdout go before returning.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if !ended && !p.wait(closeGrace) {
		p.out.f.Close()
		return fmt.Errorf("the process %d did not end after SIGKILL", pgid)
	}
	p.out.wait(closeGrace)
	return p.out.f.Close()
}

// output is the server's stdout. It reports when it is drained: every
// process that could write to it, the server's children included, is gone.
type output struct {
	f       *os.File
	once    sync.Once
	drained chan struct{} // closed at the first read error, such as EOF
}

func (o *output) Read(b []byte) (int, error) {
	n, err := o.f.Read(b)
	if err != nil {
		o.once.Do(func() { close(o.drained) })
	}
	return n, err
}

// Close does nothing: the process closes its output once it has ended,
// which the session's Close waits for.
func (o *output) Close() error { return nil }

// wait waits up to d for the output to be drained.
func (o *output) wait(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-o.drained:
	case <-timer.C:
	}
}

// wait reports whether the server exits within d.
func (p *process) wait(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	}
}

// commandLine is how an error message names a command: its program's
// base name and its arguments, cut when long.
func commandLine(cmd *exec.Cmd) string {
	args := append([]string(nil), cmd.Args...)
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	args[0] = filepath.Base(args[0])
	line := strings.Join(args, " ")
	if len(line) > 120 {
		line = line[:117] + "..."
	}
	return line
}

// exitedWith says how the server ended of its own accord, if it has or
// does within d: a server that exits at once reaches the SDK only as a
// closed connection. An end that Close's signals brought about does not
// count.
func (p *process) exitedWith(d time.Duration) (error, bool) {
	if !p.wait(d) || p.killed.Load() {
		return nil, false
	}
	return p.waitErr, true
}
