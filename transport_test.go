package onion_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// countingProxy forwards TCP connections to backend and counts them: the
// connections a client opened to the server, whatever the server is.
type countingProxy struct {
	ln      net.Listener
	backend string
	opened  atomic.Int64
	wg      sync.WaitGroup // the accept loop and every forwarding goroutine
	mu      sync.Mutex     // guards conns
	conns   []net.Conn
}

func newCountingProxy(t *testing.T, backend string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln, backend: backend}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *countingProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.opened.Add(1)
		up, err := net.Dial("tcp", p.backend)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		for _, pair := range [][2]net.Conn{{up, c}, {c, up}} {
			p.wg.Go(func() {
				io.Copy(pair[0], pair[1])
				pair[0].Close()
				pair[1].Close()
			})
		}
	}
}

func (p *countingProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// barrier lets its waiters through once n have arrived, or when done is
// closed.
type barrier struct {
	mu      sync.Mutex
	n       int
	all     chan struct{}
	stopped chan struct{}
}

func newBarrier(t *testing.T, n int) *barrier {
	b := &barrier{n: n, all: make(chan struct{}), stopped: make(chan struct{})}
	t.Cleanup(func() { close(b.stopped) })
	return b
}

func (b *barrier) wait(ctx context.Context) {
	b.mu.Lock()
	b.n--
	if b.n == 0 {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-b.stopped:
	case <-ctx.Done():
	}
}

// TestBuiltinClientPoolsConnections runs 64 runs of two requests each at
// once on one agent with the built-in client, through a proxy that counts
// the connections it opens. The 64 first requests are held by the server
// until all have arrived, and the 64 second ones leave together once every
// run has called its tool, so each wave needs 64 connections at once: a
// client that keeps them all idle in between opens 64, where go-openai's
// default client, which keeps two, opens about 126.
func TestBuiltinClientPoolsConnections(t *testing.T) {
	const runs = 64
	s := oniontest.NewServer(t)
	backend := strings.TrimSuffix(strings.TrimPrefix(s.URL(), "http://"), "/v1")
	p := newCountingProxy(t, backend)
	firstWave, secondWave := newBarrier(t, runs), newBarrier(t, runs)
	for range runs * 2 {
		s.Add(oniontest.Func(func(r oniontest.Request) oniontest.Step {
			if len(r.ToolResults()) > 0 {
				return oniontest.Text("done")
			}
			firstWave.wait(context.Background())
			return oniontest.ToolCalls(oniontest.Call("hold", `{}`))
		}))
	}
	hold, err := onion.NewTool(func(ctx context.Context) string {
		secondWave.wait(ctx)
		return "held"
	}, onion.Name("hold"), onion.Read)
	if err != nil {
		t.Fatal(err)
	}
	a, err := onion.NewAgent("pool", hold, onion.BaseURL("http://"+p.ln.Addr().String()+"/v1"), onion.APIKey("test-key"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		onion.CloseIdleConnections()
	})
	var g errgroup.Group
	for range runs {
		g.Go(func() error {
			res, err := a.Run(context.Background(), "hold on")
			if err == nil && res.Output != "done" {
				err = errors.New("the answer is " + res.Output)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := p.opened.Load(); n > runs+runs/8 {
		t.Errorf("%d runs of two requests opened %d connections, want about %d", runs, n, runs)
	} else {
		t.Logf("%d runs of two requests opened %d connections", runs, n)
	}
}

// A program, or a test that checks no goroutine is left, closes the idle
// connections of the pool that agents made without WithClient share once
// it is done with them.
func ExampleCloseIdleConnections() {
	s := oniontest.NewServer(nil, oniontest.Text("Hello."))
	defer s.Close()
	defer onion.CloseIdleConnections()
	a, err := onion.NewAgent("greeter", onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		panic(err)
	}
	defer a.Close()
	answer, err := a.Input(context.Background(), "Say hello.")
	if err != nil {
		panic(err)
	}
	fmt.Println(answer)
	// Output: Hello.
}
