package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/internal/netpolicy"
	"github.com/onionkit/onion/loop"
)

// Defaults and limits of a Browser.
const (
	defaultBrowserTimeout = 30 * time.Second
	maxPageText           = 20_000 // characters page_text returns before it cuts
	viewportWidth         = 1280
	viewportHeight        = 800
	firstTabName          = "main"
	// navigationGrace is how long Click and TypeText watch for a navigation
	// their input may have started before they return without waiting.
	navigationGrace = 150 * time.Millisecond
	// closeGrace is how long Close lets Chromium shut down by itself
	// before it is killed.
	closeGrace = 5 * time.Second
)

// errBrowserClosed is the cause of every action after, or cut short by, Close.
var errBrowserClosed = errors.New("the browser is closed")

// Browser is a headless Chromium the model drives: its exported methods are
// the tools goto, page_text, click, type_text, screenshot, new_tab,
// switch_tab, list_tabs and close_tab. Chromium starts on the first call that
// needs it, not in NewBrowser, and stops in Close (which onion calls from
// Agent.Close and never offers the model).
//
// Every request a page makes — the page itself, redirects, images, scripts,
// fetch() and WebSockets — goes through a forward proxy inside this process
// that dials through the same address policy as web_fetch: only public
// internet addresses, plus the ranges given to BrowserAllowAddresses. Each
// call has a timeout (BrowserTimeout) and ends early when its context does.
// Calls are serialised; a Browser is safe for concurrent use.
type Browser struct {
	policy  netpolicy.Policy
	timeout time.Duration
	shotDir string // "" is the working directory

	// closing ends when Close begins; it cuts short whatever action runs.
	closing    context.Context
	endClosing context.CancelFunc

	// mu guards everything below, and serialises the calls: a chromedp
	// tab runs one action at a time.
	mu       sync.Mutex
	closed   bool
	proxy    *browserProxy           // nil until Chromium starts
	root     context.Context         // the chromedp context that owns Chromium; nil until it starts
	stopRoot context.CancelFunc      // ends root, waiting for Chromium to exit
	alloc    context.CancelFunc      // ends the allocator, waiting for the profile's removal
	endLife  context.CancelCauseFunc // ends the context Chromium lives in
	tabs     []*browserTab           // in the order they were opened
	current  *browserTab             // nil when no tab is open
}

// browserTab is one named tab: a chromedp context with a target of its own.
type browserTab struct {
	name  string
	ctx   context.Context
	close context.CancelFunc
}

// Tab describes one open tab of a Browser.
type Tab struct {
	Name    string `json:"name"`    // the name given to new_tab ("main" for the first tab)
	URL     string `json:"url"`     // the address of the page it shows
	Title   string `json:"title"`   // the page's title
	Current bool   `json:"current"` // whether goto, click and the others act on it
}

// BrowserOption configures a Browser made by NewBrowser.
type BrowserOption func(*Browser)

// BrowserTimeout bounds every call of a Browser, including Chromium's start
// on the first one (default 30 s).
func BrowserTimeout(d time.Duration) BrowserOption {
	return func(b *Browser) {
		if d > 0 {
			b.timeout = d
		}
	}
}

// BrowserAllowAddresses admits addresses the policy refuses by default —
// private, loopback, link-local — for pages and everything they load. Tests
// pass 127.0.0.0/8 to reach httptest servers; give an intranet range only if
// the model may browse it.
func BrowserAllowAddresses(prefixes ...netip.Prefix) BrowserOption {
	return func(b *Browser) { b.policy.Allow = append(b.policy.Allow, prefixes...) }
}

// BrowserScreenshotDir is the directory screenshot writes into; its path
// argument is relative to it and cannot leave it. The default is the working
// directory.
func BrowserScreenshotDir(dir string) BrowserOption {
	return func(b *Browser) { b.shotDir = dir }
}

// NewBrowser returns a Browser; nothing starts until its first call. Give it
// to onion.ToolsFrom or an agent, and Close it when done.
func NewBrowser(opts ...BrowserOption) *Browser {
	b := &Browser{timeout: defaultBrowserTimeout}
	b.closing, b.endClosing = context.WithCancel(context.Background())
	for _, o := range opts {
		o(b)
	}
	return b
}

// Intents: a tool is a read only if no later call can observe that it ran.
// page_text and list_tabs are reads. goto, new_tab, switch_tab and
// close_tab are writes although they change nothing on a site: they change
// which page a tab shows or which tab is current, and every later call
// acts on that, so two of them in one response must run in order, not in
// parallel. screenshot writes a file. click and type_text are writes too: a
// click can submit a form, buy, delete or send, and Enter in a field
// submits what was typed.

// Goto opens a web page in the current tab, waits for it to load, and returns
// its title. An HTTP error status is added after the title, as in
// "Not Found (HTTP 404)". Only public internet addresses can be reached.
//
// url: the absolute http:// or https:// address to open
func (b *Browser) Goto(ctx context.Context, url string) (string, error) {
	u, err := b.policy.CheckURL(url)
	if err != nil {
		return "", fmt.Errorf("goto: %w", err)
	}
	target := u.String()
	var title string
	err = b.act(ctx, "goto "+target, func(ctx context.Context, t *browserTab) error {
		hosts, err := documentHosts(ctx, t)
		if err != nil {
			return err
		}
		mark := b.proxy.mark()
		resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(target))
		var load *chromedp.LoadError
		if errors.As(err, &load) {
			// Over HTTPS Chromium only says that the tunnel failed; the
			// proxy knows why.
			if f := b.proxy.failedSince(mark, hosts.list()); f != nil {
				return f.err
			}
			return fmt.Errorf("the page did not load: %s", load.ErrorText)
		}
		if err != nil {
			return err
		}
		if resp != nil {
			if why, ok := responseHeader(resp.Headers, refusedHeader); ok && resp.Status == http.StatusForbidden {
				return fmt.Errorf("the request for %s was refused: %s", urlHost(resp.URL), why)
			}
			if why, ok := responseHeader(resp.Headers, unreachableHeader); ok && resp.Status == http.StatusBadGateway {
				return errors.New(why)
			}
		}
		if resp == nil || resp.Status == http.StatusBadGateway || resp.Status == http.StatusForbidden {
			// chromedp saw no answer for the document (as after a jump
			// within the page), or one without the proxy's header: an
			// address the proxy could not reach must still be an error,
			// never an empty page with no title.
			if f := b.proxy.failedSince(mark, append(hosts.list(), u.Hostname())); f != nil {
				return f.err
			}
		}
		if resp == nil {
			loc, err := chromedp.Run(ctx, chromedp.Location())
			if err != nil {
				return fmt.Errorf("read the address: %w", err)
			}
			if strings.HasPrefix(loc, "chrome-error:") {
				return errors.New("the page did not load")
			}
		}
		if title, err = chromedp.Run(ctx, chromedp.Title()); err != nil {
			return fmt.Errorf("read the title: %w", err)
		}
		if resp != nil && resp.Status >= 400 { // nil after a jump within the page
			title = fmt.Sprintf("%s (HTTP %d)", title, resp.Status)
		}
		return nil
	})
	return title, err
}

// PageText returns the visible text of the current page, or of one element
// of it (for a form field, its current value). Long text is cut, with a note
// saying so at the end; ask for a narrower element then.
//
// selector: a CSS selector such as "main", "#results" or "table.prices"; "" or "body" for the whole page
//
//onion:intent read
func (b *Browser) PageText(ctx context.Context, selector string) (string, error) {
	selector = strings.TrimSpace(selector)
	var text string
	err := b.act(ctx, fmt.Sprintf("page_text %q", selector), func(ctx context.Context, t *browserTab) error {
		r, err := chromedp.Run(ctx, chromedp.Evaluate[pageTextResult](jsCall(pageTextJS, selector)))
		if err != nil {
			return err
		}
		if err := elementError(r.State); err != nil {
			return err
		}
		text = capPageText(r.Text, maxPageText)
		return nil
	})
	return text, err
}

// Click clicks an element of the current page with the mouse. If the click
// opens another page, Click waits for it to load.
//
// selector: a CSS selector for the element, such as "#submit", "button.buy" or "a[href='/next']"
func (b *Browser) Click(ctx context.Context, selector string) error {
	selector = strings.TrimSpace(selector)
	return b.act(ctx, fmt.Sprintf("click %q", selector), func(ctx context.Context, t *browserTab) error {
		if err := prepareElement(ctx, selector, false); err != nil {
			return err
		}
		return settleInput(ctx, t, chromedp.Click(chromedp.CSS(selector)))
	})
}

// TypeText types text into a field of the current page, replacing what it
// held, as a user would with the keyboard. A line break in the text presses
// Enter, which submits most forms; TypeText then waits for the next page.
//
// selector: a CSS selector for the field, such as "#search", "input[name=q]" or "textarea"
// text: what to type
func (b *Browser) TypeText(ctx context.Context, selector, text string) error {
	selector = strings.TrimSpace(selector)
	return b.act(ctx, fmt.Sprintf("type_text %q", selector), func(ctx context.Context, t *browserTab) error {
		if err := prepareElement(ctx, selector, true); err != nil {
			return err
		}
		return settleInput(ctx, t, chromedp.KeyEvent(text))
	})
}

// Screenshot saves a PNG picture of what the current tab shows (the visible
// part of the page) and returns where it was saved; you are shown the
// picture too.
//
// path: the file to write, relative to the screenshot directory, such as "home.png"; ".png" is added if it has no extension
func (b *Browser) Screenshot(ctx context.Context, path string) (string, error) {
	path = strings.TrimSpace(path)
	if path == "" {
		path = "screenshot-" + time.Now().Format("20060102-150405") + ".png"
	}
	if filepath.Ext(path) == "" {
		path += ".png"
	}
	op := fmt.Sprintf("screenshot %q", path)
	if !filepath.IsLocal(path) {
		return "", fmt.Errorf("%s: the path must be relative and stay inside the screenshot directory, such as \"shots/home.png\"", op)
	}
	var (
		written string
		shot    []byte
	)
	err := b.act(ctx, op, func(ctx context.Context, t *browserTab) error {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			return err
		}
		written, err = b.writeShot(path, png)
		shot = png
		return err
	})
	if err == nil && len(shot) <= loop.MaxImageBytes {
		// Run as a tool, the model sees the picture after the path; a
		// picture too large to show is only saved.
		onion.ShowImages(ctx, onion.Image{MIMEType: "image/png", Data: shot})
	}
	return written, err
}

// NewTab opens a new, empty tab and makes it the current one; goto then
// loads a page into it. The first tab, opened by the first call, is "main".
//
// name: a short name for the tab, used by switch_tab and close_tab, such as "docs"
func (b *Browser) NewTab(ctx context.Context, name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return errors.New("new_tab: the name is empty; give a short name such as \"docs\"")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(ctx); err != nil {
		return fmt.Errorf("new_tab %q: %w", name, err)
	}
	if b.tab(name) != nil {
		return fmt.Errorf("new_tab %q: a tab has that name already; choose another or switch_tab to it", name)
	}
	t, err := b.openTab(ctx, name)
	if err != nil {
		return fmt.Errorf("new_tab %q: %w", name, err)
	}
	b.current = t
	return nil
}

// SwitchTab makes another open tab the current one: goto, page_text, click,
// type_text and screenshot act on it from then on.
//
// name: the tab's name, as list_tabs shows it
func (b *Browser) SwitchTab(ctx context.Context, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("switch_tab %q: %w", name, errBrowserClosed)
	}
	t := b.tab(strings.TrimSpace(name))
	if t == nil {
		return b.noTab("switch_tab", name)
	}
	b.current = t
	return nil
}

// ListTabs lists the open tabs: name, address, title, and which one is
// current.
//
//onion:intent read
func (b *Browser) ListTabs(ctx context.Context) ([]Tab, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("list_tabs: %w", errBrowserClosed)
	}
	b.forgetCrashed()
	tabs := make([]Tab, 0, len(b.tabs))
	if len(b.tabs) == 0 {
		return tabs, nil // nothing is open, and nothing needs starting to say so
	}
	actx, done := b.bound(ctx, b.root)
	defer done()
	infos, err := chromedp.Targets(actx)
	if err != nil {
		return nil, fmt.Errorf("list_tabs: %w", causeOf(actx, err))
	}
	for _, t := range b.tabs {
		tab := Tab{Name: t.name, Current: t == b.current}
		if c := chromedp.FromContext(t.ctx); c != nil && c.Target != nil {
			for _, info := range infos {
				if info.TargetID == c.Target.TargetID {
					tab.URL, tab.Title = info.URL, info.Title
				}
			}
		}
		tabs = append(tabs, tab)
	}
	return tabs, nil
}

// CloseTab closes an open tab. If it was the current tab, the tab opened
// most recently before it becomes current.
//
// name: the tab's name, as list_tabs shows it
func (b *Browser) CloseTab(ctx context.Context, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("close_tab %q: %w", name, errBrowserClosed)
	}
	t := b.tab(strings.TrimSpace(name))
	if t == nil {
		return b.noTab("close_tab", name)
	}
	for i, o := range b.tabs {
		if o == t {
			b.tabs = append(b.tabs[:i], b.tabs[i+1:]...)
			break
		}
	}
	if b.current == t {
		b.current = nil
		if n := len(b.tabs); n > 0 {
			b.current = b.tabs[n-1]
		}
	}
	t.close()
	return nil
}

// Close shuts Chromium down, removes its profile directory and stops the
// proxy. It is safe to call more than once; later calls do nothing, and
// every other method then fails.
func (b *Browser) Close() error {
	b.endClosing() // cut short a call in progress, so that the lock is free soon
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	return b.stop()
}

// act runs fn on the current tab with the browser's bounds, starting
// Chromium and opening the first tab if need be. Its errors begin with op;
// when the call's time or context ran out, they say that instead of what
// chromedp made of it.
func (b *Browser) act(ctx context.Context, op string, fn func(ctx context.Context, t *browserTab) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.start(ctx); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if b.current == nil {
		t, err := b.openTab(ctx, firstTabName)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		b.current = t
	}
	actx, done := b.bound(ctx, b.current.ctx)
	defer done()
	if err := fn(actx, b.current); err != nil {
		if b.root.Err() != nil {
			return fmt.Errorf("%s: chromium exited, and its tabs with it; the next call starts it again: %w", op, err)
		}
		return fmt.Errorf("%s: %w", op, causeOf(actx, err))
	}
	return nil
}

// bound returns a context below parent that ends, with the reason as its
// cause, when ctx ends, when Close begins or when the browser's timeout
// passes. done releases it. chromedp binds a tab or a browser to the context
// of its first action, so only later actions may run on such a context.
func (b *Browser) bound(ctx, parent context.Context) (context.Context, func()) {
	bctx, cancel := context.WithCancelCause(parent)
	stop := b.watch(ctx, cancel)
	return bctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// watch calls cancel with the reason when ctx ends, Close begins or the
// browser's timeout passes, until stop is called.
func (b *Browser) watch(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	timer := time.AfterFunc(b.timeout, func() {
		cancel(fmt.Errorf("did not finish within %s (the browser's timeout): %w", b.timeout, context.DeadlineExceeded))
	})
	stopCtx := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	stopClose := context.AfterFunc(b.closing, func() { cancel(errBrowserClosed) })
	return func() {
		timer.Stop()
		stopCtx()
		stopClose()
	}
}

// causeOf returns the reason ctx ended if it did, else err.
func causeOf(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// start launches the proxy and Chromium if they are not running, or no
// longer: after a crash, the tabs are gone and Chromium starts afresh. b.mu
// is held.
func (b *Browser) start(ctx context.Context) error {
	if b.closed {
		return errBrowserClosed
	}
	b.forgetCrashed()
	if b.root != nil {
		return nil
	}
	exe, err := findChromium()
	if err != nil {
		return err
	}
	proxy, err := startBrowserProxy(b.policy)
	if err != nil {
		return err
	}
	output := &outputTail{}
	opts := slices.Concat(chromedp.DefaultExecAllocatorOptions[:], []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		// The flags a closed network needs: no background connections, no
		// GPU, no QUIC (UDP would not go through the proxy).
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		// Less of Chromium's own traffic to Google; what remains (update
		// checks, account lookups) meets the proxy like any page.
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,AutofillServerCommunication,OptimizationHints,MediaRouter,NetworkTimeServiceQuerying,CertificateTransparencyComponentUpdater"),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		// Every request goes through the proxy, loopback too: Chromium
		// bypasses the proxy for loopback unless told "<-loopback>".
		chromedp.ProxyServer(proxy.url()),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		// WebRTC may send UDP only through a proxy, i.e. not at all.
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		// Pages may not open windows of their own; tabs are the model's.
		chromedp.Flag("disable-popup-blocking", false),
		chromedp.WindowSize(viewportWidth, viewportHeight),
		chromedp.CombinedOutput(output),
	})
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}

	// Chromium lives as long as the context of its first action, so that
	// context hangs from Background; the call's own bounds reach it through
	// watch, and only while it starts.
	life, end := context.WithCancelCause(context.Background())
	stop := b.watch(ctx, end)
	allocCtx, alloc := chromedp.NewExecAllocator(life, opts...)
	root, stopRoot := chromedp.NewContext(allocCtx)
	_, err = chromedp.Targets(root) // starts Chromium without attaching a tab
	if err == nil {
		// A download would write wherever Chromium likes; the model has
		// web_fetch for files.
		_, err = chromedp.CallBrowser(root, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny,
		})
	}
	stop()
	if err == nil && life.Err() != nil {
		err = life.Err()
	}
	if err != nil {
		interrupted := life.Err() != nil // by the call's bounds, not by Chromium
		err = causeOf(life, err)
		stopRoot()
		alloc()
		end(context.Canceled)
		proxy.close()
		if out := output.String(); out != "" && !interrupted {
			return fmt.Errorf("start chromium (%s): %w; its last output: %s", exe, err, out)
		}
		return fmt.Errorf("start chromium (%s): %w", exe, err)
	}
	b.proxy, b.endLife, b.alloc, b.root, b.stopRoot = proxy, end, alloc, root, stopRoot
	return nil
}

// forgetCrashed frees what is left of a Chromium that exited by itself
// (chromedp ends root when it loses Chromium), so that the next call starts
// a new one. b.mu is held.
func (b *Browser) forgetCrashed() {
	if b.root != nil && b.root.Err() != nil {
		b.stop() // nothing to report: the tabs and the process are gone already
	}
}

// stop shuts down Chromium, its allocator and the proxy, in that order. b.mu
// is held.
func (b *Browser) stop() error {
	if b.root == nil {
		return nil
	}
	var errs []error
	// A graceful close first: Chromium closes its tabs and exits by itself.
	ctx, cancel := context.WithTimeout(b.root, closeGrace)
	if err := chromedp.Cancel(ctx); err != nil && !errors.Is(err, context.Canceled) {
		errs = append(errs, fmt.Errorf("close chromium: %w", err))
	}
	cancel()
	for _, t := range b.tabs {
		t.close()
	}
	b.stopRoot() // waits for the process to exit
	b.alloc()    // waits for the profile directory to be removed
	b.endLife(context.Canceled)
	if err := b.proxy.close(); err != nil {
		errs = append(errs, err)
	}
	b.tabs, b.current, b.root, b.proxy = nil, nil, nil, nil
	return errors.Join(errs...)
}

// openTab opens a tab and returns it. b.mu is held, Chromium runs.
func (b *Browser) openTab(ctx context.Context, name string) (*browserTab, error) {
	// As with Chromium itself, a tab lives as long as the context of its
	// first action.
	parent, end := context.WithCancelCause(b.root)
	stop := b.watch(ctx, end)
	tctx, closeTab := chromedp.NewContext(parent)
	err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: viewportWidth, Height: viewportHeight, DeviceScaleFactor: 1,
		})
		return err
	}))
	stop()
	if err == nil && parent.Err() != nil {
		err = parent.Err()
	}
	if err != nil {
		err = causeOf(parent, err)
		closeTab()
		end(context.Canceled)
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	// A JavaScript dialog (alert, confirm, beforeunload) freezes its page
	// until it is answered, and the model cannot see it: accept each one.
	dialogs := chromedp.Events(tctx, page.JavascriptDialogOpening)
	var answering sync.WaitGroup
	answering.Go(func() {
		for _, err := range dialogs {
			if err != nil {
				return // the tab is closed
			}
			chromedp.Call(tctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	})
	t := &browserTab{name: name, ctx: tctx, close: func() {
		closeTab()
		end(context.Canceled)
		answering.Wait()
	}}
	b.tabs = append(b.tabs, t)
	return t, nil
}

// tab returns the open tab called name, or nil. b.mu is held.
func (b *Browser) tab(name string) *browserTab {
	for _, t := range b.tabs {
		if t.name == name {
			return t
		}
	}
	return nil
}

// noTab is the error for a tab name that is not open. b.mu is held.
func (b *Browser) noTab(op, name string) error {
	if len(b.tabs) == 0 {
		return fmt.Errorf("%s %q: no tab is open; goto opens the first one, new_tab another", op, name)
	}
	names := make([]string, len(b.tabs))
	for i, t := range b.tabs {
		names[i] = fmt.Sprintf("%q", t.name)
	}
	return fmt.Errorf("%s %q: no tab has that name; the open tabs are %s", op, name, strings.Join(names, ", "))
}

// writeShot writes a screenshot below the screenshot directory and returns
// its path.
func (b *Browser) writeShot(path string, png []byte) (string, error) {
	dir := b.shotDir
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("open the screenshot directory: %w", err)
	}
	defer root.Close()
	if d := filepath.Dir(path); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	if err := root.WriteFile(path, png, 0o644); err != nil {
		return "", err
	}
	full := filepath.Join(dir, path)
	if abs, err := filepath.Abs(full); err == nil {
		full = abs
	}
	return full, nil
}

// findChromium returns the Chromium executable: $CHROME_PATH, else
// /usr/bin/chromium, else chromium, chromium-browser or google-chrome from
// PATH.
func findChromium() (string, error) {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		exe, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("chromium: CHROME_PATH is %q, which is not an executable: %w", p, err)
		}
		return exe, nil
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if exe, err := exec.LookPath(name); err == nil {
			return exe, nil
		}
	}
	return "", errors.New("chromium is not installed: install it (on Debian: apt-get install chromium) or set CHROME_PATH to the browser's executable")
}

// settleInput runs an input action and, if it starts a navigation of the
// tab's main frame within navigationGrace, waits until the new page has
// loaded.
func settleInput(ctx context.Context, t *browserTab, input chromedp.Action[chromedp.Void]) error {
	// The main frame of a page target has the target's id.
	mainFrame := cdp.FrameID(chromedp.FromContext(t.ctx).Target.TargetID)
	started := make(chan struct{}, 1)
	stopped := make(chan struct{}, 1)
	signal := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := chromedp.Listen(lctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventFrameStartedLoading:
			if ev.FrameID == mainFrame {
				signal(started)
			}
		case *page.EventFrameStoppedLoading:
			if ev.FrameID == mainFrame {
				signal(stopped)
			}
		case *page.EventNavigatedWithinDocument:
			if ev.FrameID == mainFrame {
				signal(stopped)
			}
		}
	})
	if err != nil {
		return err
	}
	if err := chromedp.Do(ctx, input); err != nil {
		return err
	}
	grace := time.NewTimer(navigationGrace)
	defer grace.Stop()
	select {
	case <-started:
	case <-stopped: // a same-document navigation: nothing to load
		return nil
	case <-grace.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the next page to load: %w", ctx.Err())
	}
}

// hostSet collects host names from a listener, which runs on chromedp's
// goroutine.
type hostSet struct {
	mu    sync.Mutex // guards hosts
	hosts []string
}

func (h *hostSet) add(host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hosts = append(h.hosts, host)
}

func (h *hostSet) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.hosts)
}

// documentHosts collects, until ctx ends, the hosts of the documents the
// tab's main frame requests, redirects included, so that Goto can tell the
// proxy's failures for them from those of Chromium's own background
// requests.
func documentHosts(ctx context.Context, t *browserTab) (*hostSet, error) {
	mainFrame := cdp.FrameID(chromedp.FromContext(t.ctx).Target.TargetID)
	hosts := &hostSet{}
	err := chromedp.Listen(ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok && ev.Type == network.ResourceTypeDocument && ev.FrameID == mainFrame {
			if u, err := neturl.Parse(ev.Request.URL); err == nil {
				hosts.add(u.Hostname())
			}
		}
	})
	return hosts, err
}

// prepareElement checks that selector matches a visible element, so that a
// missing one fails at once instead of at the timeout. With focus, it also
// focuses the element and selects its content, so that typing replaces it.
func prepareElement(ctx context.Context, selector string, focus bool) error {
	if selector == "" {
		return errors.New("the selector is empty; give a CSS selector such as \"#search\"")
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](jsCall(prepareElementJS, selector, focus)))
	if err != nil {
		return err
	}
	return elementError(state)
}

// elementError turns the state the page scripts report into an error.
func elementError(state string) error {
	switch {
	case state == "ok":
		return nil
	case state == "missing":
		return errors.New("no element matches the selector; call page_text to see the page, or check the selector")
	case state == "hidden":
		return errors.New("the element is not visible; scroll, open the menu that holds it, or choose another")
	case state == "unfocusable":
		return errors.New("the element cannot take text; select an input, a textarea or an editable element")
	case strings.HasPrefix(state, "invalid: "):
		return fmt.Errorf("the selector is not valid CSS: %s", strings.TrimPrefix(state, "invalid: "))
	}
	return fmt.Errorf("unexpected element state %q", state)
}

// jsCall returns a JavaScript expression calling fn with the JSON-encoded
// arguments, so that no argument can break out of its string.
func jsCall(fn string, args ...any) string {
	enc := make([]string, len(args))
	for i, a := range args {
		b, _ := json.Marshal(a) // strings and bools always encode
		enc[i] = string(b)
	}
	return "(" + fn + ")(" + strings.Join(enc, ", ") + ")"
}

// pageTextResult is what pageTextJS returns.
type pageTextResult struct {
	State string `json:"state"` // as elementError reads it
	Text  string `json:"text"`
}

// The page scripts take their arguments JSON-encoded (see jsCall), and report
// a bad selector as a state rather than throwing, so that the model reads
// the browser's reason without a JavaScript stack.
const pageTextJS = `(sel) => {
	let el;
	try {
		el = (sel === "" || sel === "body") ? (document.body || document.documentElement) : document.querySelector(sel);
	} catch (e) {
		return {state: "invalid: " + e.message, text: ""};
	}
	if (!el) return {state: "missing", text: ""};
	if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) {
		return {state: "ok", text: el.value};
	}
	return {state: "ok", text: el.innerText ?? el.textContent ?? ""};
}`

const prepareElementJS = `(sel, focus) => {
	let el;
	try {
		el = document.querySelector(sel);
	} catch (e) {
		return "invalid: " + e.message;
	}
	if (!el) return "missing";
	if (el.getClientRects().length === 0) return "hidden";
	if (!focus) return "ok";
	el.focus();
	if (document.activeElement !== el) return "unfocusable";
	if (typeof el.select === "function") el.select();
	else if (el.isContentEditable) document.execCommand("selectAll");
	return "ok";
}`

// capPageText cuts s to limit characters, saying how much was left out.
func capPageText(s string, limit int) string {
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	i := 0
	for range limit {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return fmt.Sprintf("%s\n[cut: showing %d of %d characters; call page_text with a narrower selector for the rest]", s[:i], limit, n)
}

// urlHost returns the host of a URL for messages, or the URL itself.
func urlHost(raw string) string {
	if u, err := neturl.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// responseHeader returns the value of a response header, whatever its case.
func responseHeader(h network.Headers, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, ok := v.(string)
			return s, ok
		}
	}
	return "", false
}

// outputTail keeps the last bytes written to it.
type outputTail struct {
	mu  sync.Mutex // guards buf
	buf []byte
}

const maxOutputTail = 2048

func (w *outputTail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > maxOutputTail {
		w.buf = w.buf[len(w.buf)-maxOutputTail:]
	}
	return len(p), nil
}

func (w *outputTail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.buf))
}
