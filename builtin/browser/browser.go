package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
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
