package devui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/onionkit/onion"
)

var update = flag.Bool("update", false, "write the README's screenshot of the page (docs/devui.png)")

// TestMain runs the tests, closes the Chromium they share, and looks for
// goroutines left running.
func TestMain(m *testing.M) {
	code := m.Run()
	closeBrowser()
	onion.CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// The Chromium the tests share: started by the first test that needs it,
// each test in a tab of its own.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
}

// findChromium returns the Chromium executable, as package browser finds
// it: $CHROME_PATH, else /usr/bin/chromium, else one on the PATH.
func findChromium() (string, error) {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if exe, err := exec.LookPath(name); err == nil {
			return exe, nil
		}
	}
	return "", errors.New("no chromium, chromium-browser or google-chrome, and no $CHROME_PATH")
}

// newTab returns a tab of the shared Chromium, closed when the test ends;
// it skips the test when there is no Chromium.
func newTab(t testing.TB) context.Context {
	t.Helper()
	exe, err := findChromium()
	if err != nil {
		t.Skipf("chromium is not installed (%v); CI installs it with apt-get install chromium", err)
	}
	browser.once.Do(func() {
		opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
			chromedp.ExecPath(exe),
			chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("no-first-run", true),
			chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter"),
			chromedp.WindowSize(1400, 900),
		)
		if os.Geteuid() == 0 {
			opts = append(opts, chromedp.NoSandbox)
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(alloc)
		_, browser.err = chromedp.Targets(ctx) // starts Chromium without a tab
		browser.ctx, browser.cancel = ctx, func() { cancelCtx(); cancelAlloc() }
	})
	if browser.err != nil {
		t.Fatalf("start chromium: %v", browser.err)
	}
	tab, cancel := chromedp.NewContext(browser.ctx)
	t.Cleanup(cancel)
	return tab
}

func closeBrowser() {
	if browser.cancel != nil {
		browser.cancel()
	}
}

// page is the UI of some agents, served on the loopback and open in a tab.
type page struct {
	t   testing.TB
	ui  *UI
	url string
	tab context.Context

	mu   sync.Mutex
	logs []string // the page's console messages and uncaught exceptions
}

// openPage serves the UI of agents and opens it in a tab, connected.
func openPage(t testing.TB, agents []*onion.Agent, opts ...Option) *page {
	t.Helper()
	ui, err := New(agents, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ui)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { ui.Close() })
	p := &page{t: t, ui: ui, url: srv.URL, tab: newTab(t)}
	err = chromedp.Listen(p.tab, func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			line = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
		case *cdpruntime.EventExceptionThrown:
			line = "exception: " + ev.ExceptionDetails.Text
			if e := ev.ExceptionDetails.Exception; e != nil {
				line += " " + e.Description
			}
		default:
			return
		}
		p.mu.Lock()
		p.logs = append(p.logs, line)
		p.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Navigate(srv.URL))
	p.wait(`document.getElementById('connection').dataset.state === 'open' && window.onionDev.snapshots > 0`)
	return p
}

// do runs actions in the tab, each bounded.
func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%v\n%s", err, p.text())
	}
}

// click clicks the element selector finds, as a mouse does. The page
// redraws what changed, so an element found may be replaced before the
// click lands: then it is found and clicked again.
func (p *page) click(selector string) {
	p.t.Helper()
	var err error
	for range 5 {
		ctx, cancel := context.WithTimeout(p.tab, 20*time.Second)
		err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector)))
		cancel()
		if err == nil || !strings.Contains(err.Error(), "node") {
			break
		}
	}
	if err != nil {
		p.t.Fatalf("click %s: %v\n%s", selector, err, p.text())
	}
}

// wait waits until the JavaScript expression is true.
func (p *page) wait(expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		p.t.Fatalf("waiting for %s: %v\nthe page says:\n%s", expr, err, p.text())
	}
}

// eval returns the value of a JavaScript expression.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// textOf is the text of the first element selector finds, "" if none.
func (p *page) textOf(selector string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, selector))
}

// text is the page's visible text and its console, for failures.
func (p *page) text() string {
	ctx, cancel := context.WithTimeout(p.tab, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		s = err.Error()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return s + "\nconsole:\n" + strings.Join(p.logs, "\n")
}

// send types prompt and sends it with the keyboard (Ctrl+Enter).
func (p *page) send(prompt string) {
	p.t.Helper()
	p.do(chromedp.SendKeys(chromedp.CSS("#prompt"), prompt), chromedp.Click(chromedp.CSS("#send")))
}

// gate is a proxy in front of a model server that holds each reply once
// marker has passed through it, until release is closed: the page is
// then seen mid-stream.
func gate(t testing.TB, target, marker string) (string, chan struct{}) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host}) },
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			resp.Body = &gatedBody{ReadCloser: resp.Body, marker: marker, release: release}
			return nil
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return srv.URL + u.Path, release
}

type gatedBody struct {
	io.ReadCloser
	marker  string
	seen    strings.Builder
	pending []byte // read past the marker's event, held until release
	held    bool
	release chan struct{}
}

func (g *gatedBody) Read(b []byte) (int, error) {
	if g.held {
		<-g.release
		g.held = false
	}
	if len(g.pending) > 0 {
		n := copy(b, g.pending)
		g.pending = g.pending[n:]
		return n, nil
	}
	n, err := g.ReadCloser.Read(b)
	if g.marker == "" {
		return n, err
	}
	before := g.seen.Len()
	g.seen.Write(b[:n])
	i := strings.Index(g.seen.String(), g.marker)
	if i < 0 {
		return n, err
	}
	// Let through the event that holds the marker, hold the rest.
	end := strings.Index(g.seen.String()[i:], "\n\n")
	cut := n
	if end >= 0 {
		cut = min(n, i+end+2-before)
	}
	g.pending = append(g.pending, b[cut:n]...)
	g.marker, g.held = "", true
	if err != nil && len(g.pending) > 0 {
		err = nil // given with the held bytes
	}
	return cut, err
}

// post calls the UI served at base as its page does, and returns the
// status and the JSON reply.
func post(t testing.TB, u *UI, base, path string, body any) (int, map[string]any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", base+path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(tokenHeader, u.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// serveUI serves the UI of agents on the loopback until the test ends.
func serveUI(t testing.TB, agents []*onion.Agent, opts ...Option) (*UI, string) {
	t.Helper()
	u, err := New(agents, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(u)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { u.Close() })
	return u, srv.URL
}
