package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// TestBrowser drives one real Chromium through every tool, against local
// pages; the first launch dominates its run time.
func TestBrowser(t *testing.T) {
	skipWithoutChromium(t)
	// A cleanup registered first runs last, after the servers' cleanups.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })

	var refusedHits atomic.Int64
	refused := refusedServer(t, &refusedHits)
	site, hung := testSite(t, refused.URL)
	shots := t.TempDir()
	b := NewBrowser(
		BrowserAllowAddresses(netip.MustParsePrefix("127.0.0.1/32")),
		BrowserScreenshotDir(shots),
	)
	defer b.Close()
	ctx := t.Context()

	t.Run("Goto", func(t *testing.T) {
		start := time.Now()
		title, err := b.Goto(ctx, site.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("first goto, Chromium's start included: %v", time.Since(start))
		if title != "Onion Test" {
			t.Errorf("title = %q, want %q", title, "Onion Test")
		}
		start = time.Now()
		title, err = b.Goto(ctx, site.URL+"/missing")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("later goto: %v", time.Since(start))
		if title != "Not Here (HTTP 404)" {
			t.Errorf("title of a 404 page = %q, want %q", title, "Not Here (HTTP 404)")
		}
	})

	t.Run("PageText", func(t *testing.T) {
		mustGoto(t, b, site.URL)
		for _, tc := range []struct{ selector, want string }{
			{"#h", "Hello, onion"},
			{"#para", "A paragraph of visible text."},
			{"  #para  ", "A paragraph of visible text."},
		} {
			got, err := b.PageText(ctx, tc.selector)
			if err != nil {
				t.Errorf("PageText(%q): %v", tc.selector, err)
			} else if got != tc.want {
				t.Errorf("PageText(%q) = %q, want %q", tc.selector, got, tc.want)
			}
		}
		for _, sel := range []string{"", "body"} {
			got, err := b.PageText(ctx, sel)
			if err != nil {
				t.Fatalf("PageText(%q): %v", sel, err)
			}
			if !strings.Contains(got, "Hello, onion") || !strings.Contains(got, "next page") {
				t.Errorf("PageText(%q) = %q, want the whole page", sel, got)
			}
			if strings.Contains(got, "hidden text") {
				t.Errorf("PageText(%q) = %q, shows an element that is not displayed", sel, got)
			}
		}
		_, err := b.PageText(ctx, "#nope")
		if err == nil || !strings.Contains(err.Error(), "no element matches") {
			t.Errorf("PageText(#nope) error = %v, want one saying no element matches", err)
		}
		_, err = b.PageText(ctx, "##bad")
		if err == nil || !strings.Contains(err.Error(), "the selector is not valid CSS") || strings.Contains(err.Error(), "at <anonymous>") {
			t.Errorf("PageText(##bad) error = %v, want one saying the selector is not valid", err)
		}

		mustGoto(t, b, site.URL+"/long")
		got, err := b.PageText(ctx, "#long")
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("\n[cut: showing %d of %d characters;", maxPageText, maxPageText+500)
		if !strings.HasPrefix(got, strings.Repeat("x", maxPageText)+want) {
			t.Errorf("long text ends %q, want the first %d characters and a note beginning %q", got[max(0, len(got)-120):], maxPageText, want)
		}
	})

	t.Run("Click", func(t *testing.T) {
		mustGoto(t, b, site.URL)
		start := time.Now()
		if err := b.Click(ctx, "#btn"); err != nil {
			t.Fatal(err)
		}
		t.Logf("click with no navigation: %v", time.Since(start))
		if got := mustText(t, b, "#out"); got != "clicked" {
			t.Errorf("after the click #out = %q, want %q", got, "clicked")
		}

		if err := b.Click(ctx, "#alert"); err != nil {
			t.Fatal(err)
		}
		if got := mustText(t, b, "#out"); got != "after the alert" {
			t.Errorf("after a click that opens an alert, #out = %q, want %q", got, "after the alert")
		}

		start = time.Now()
		if err := b.Click(ctx, "#next"); err != nil {
			t.Fatal(err)
		}
		t.Logf("click that navigates: %v", time.Since(start))
		if got := mustText(t, b, "#msg"); got != "You made it." {
			t.Errorf("after clicking the link #msg = %q, want the next page's %q", got, "You made it.")
		}

		for _, tc := range []struct{ selector, want string }{
			{"#nope", "no element matches"},
			{"", "selector is empty"},
		} {
			err := b.Click(ctx, tc.selector)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Click(%q) error = %v, want one containing %q", tc.selector, err, tc.want)
			}
		}
		mustGoto(t, b, site.URL)
		if err := b.Click(ctx, "#hidden"); err == nil || !strings.Contains(err.Error(), "not visible") {
			t.Errorf("Click(#hidden) error = %v, want one saying it is not visible", err)
		}
	})

	t.Run("TypeText", func(t *testing.T) {
		mustGoto(t, b, site.URL)
		if err := b.TypeText(ctx, "#in", "héllo, wörld"); err != nil {
			t.Fatal(err)
		}
		if got := mustText(t, b, "#echo"); got != "héllo, wörld" {
			t.Errorf("echo of the typed text = %q, want %q (replacing the old value)", got, "héllo, wörld")
		}
		if got := mustText(t, b, "#in"); got != "héllo, wörld" {
			t.Errorf("PageText of the field = %q, want its value %q", got, "héllo, wörld")
		}
		// Enter submits the form and type_text waits for the results.
		if err := b.TypeText(ctx, "#q", "onions\n"); err != nil {
			t.Fatal(err)
		}
		if got := mustText(t, b, "#results"); got != "results for onions" {
			t.Errorf("after submitting #results = %q, want %q", got, "results for onions")
		}
		if err := b.TypeText(ctx, "#results", "x"); err == nil || !strings.Contains(err.Error(), "cannot take text") {
			t.Errorf("TypeText into a paragraph: error = %v, want one saying it cannot take text", err)
		}
	})

	t.Run("Screenshot", func(t *testing.T) {
		mustGoto(t, b, site.URL)
		path, err := b.Screenshot(ctx, "shots/home")
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(shots, "shots", "home.png"); path != want {
			t.Errorf("Screenshot returned %q, want %q", path, want)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s does not start with the PNG signature: % x", path, data[:min(8, len(data))])
		}
		for _, bad := range []string{"../out.png", "/tmp/out.png"} {
			if _, err := b.Screenshot(ctx, bad); err == nil || !strings.Contains(err.Error(), "inside the screenshot directory") {
				t.Errorf("Screenshot(%q) error = %v, want a refusal", bad, err)
			}
		}
	})

	t.Run("Tabs", func(t *testing.T) {
		mustGoto(t, b, site.URL)
		if err := b.NewTab(ctx, "docs"); err != nil {
			t.Fatal(err)
		}
		if title := mustGoto(t, b, site.URL+"/second"); title != "Second Page" {
			t.Fatalf("goto in the new tab: title %q", title)
		}
		if err := b.NewTab(ctx, "docs"); err == nil || !strings.Contains(err.Error(), "has that name already") {
			t.Errorf("NewTab with a taken name: error = %v", err)
		}
		if err := b.SwitchTab(ctx, "main"); err != nil {
			t.Fatal(err)
		}
		if got := mustText(t, b, "#h"); got != "Hello, onion" {
			t.Errorf("after switching back, #h = %q", got)
		}
		tabs, err := b.ListTabs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []Tab{
			{Name: "main", URL: site.URL + "/", Title: "Onion Test", Current: true},
			{Name: "docs", URL: site.URL + "/second", Title: "Second Page"},
		}
		if !slices.Equal(tabs, want) {
			t.Errorf("ListTabs =\n%+v\nwant\n%+v", tabs, want)
		}
		if err := b.SwitchTab(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `the open tabs are "main", "docs"`) {
			t.Errorf("SwitchTab(nope) error = %v, want one listing the open tabs", err)
		}
		if err := b.CloseTab(ctx, "main"); err != nil {
			t.Fatal(err)
		}
		tabs, err = b.ListTabs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tabs) != 1 || tabs[0].Name != "docs" || !tabs[0].Current {
			t.Errorf("after closing main, ListTabs = %+v, want docs alone and current", tabs)
		}
		if got := mustText(t, b, "#msg"); got != "You made it." {
			t.Errorf("the remaining tab shows %q", got)
		}
		if err := b.CloseTab(ctx, "docs"); err != nil {
			t.Fatal(err)
		}
		if tabs, err := b.ListTabs(ctx); err != nil || len(tabs) != 0 {
			t.Errorf("with every tab closed, ListTabs = %+v, %v; want none", tabs, err)
		}
		// The next action opens a fresh first tab.
		mustGoto(t, b, site.URL)
		if tabs, err := b.ListTabs(ctx); err != nil || len(tabs) != 1 || tabs[0].Name != "main" {
			t.Errorf("after goto with no tab, ListTabs = %+v, %v; want main", tabs, err)
		}
	})

	t.Run("RedirectToRefusedAddress", func(t *testing.T) {
		_, err := b.Goto(ctx, site.URL+"/redirect")
		if err == nil {
			t.Fatal("a redirect to 127.0.0.2 was followed")
		}
		if !strings.Contains(err.Error(), "127.0.0.2") || !strings.Contains(err.Error(), "refused") {
			t.Errorf("error = %v, want one naming 127.0.0.2 as refused", err)
		}
		if n := refusedHits.Load(); n != 0 {
			t.Errorf("the refused server got %d requests", n)
		}
	})

	t.Run("RedirectToRefusedHTTPS", func(t *testing.T) {
		// HTTPS goes through a CONNECT tunnel, which the proxy refuses;
		// Chromium then reports only a tunnel error, and Goto asks the
		// proxy why.
		_, err := b.Goto(ctx, site.URL+"/redirect-tls")
		if err == nil || !strings.Contains(err.Error(), "127.0.0.2") || !strings.Contains(err.Error(), "refused") {
			t.Errorf("error = %v, want one naming 127.0.0.2 as refused", err)
		}
	})

	t.Run("UnreachableAddress", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + ln.Addr().String() + "/"
		ln.Close()
		_, err = b.Goto(ctx, closed)
		if err == nil || !strings.Contains(err.Error(), "could not reach "+ln.Addr().String()) {
			t.Errorf("Goto of a closed port: error = %v, want one saying it could not reach %s", err, ln.Addr())
		}
	})

	t.Run("SubresourcesOfRefusedAddress", func(t *testing.T) {
		mark := b.proxy.mark()
		if title := mustGoto(t, b, site.URL+"/subresources"); title != "Subresources" {
			t.Fatalf("title %q", title)
		}
		waitFor(t, b, `document.getElementById("fetch").textContent !== ""`)
		for sel, want := range map[string]string{
			"#same":  "got:ok",
			"#xhr":   "blocked",
			"#img":   "img blocked",
			"#fetch": "blocked",
		} {
			if got := mustText(t, b, sel); got != want {
				t.Errorf("%s = %q, want %q", sel, got, want)
			}
		}
		r := b.proxy.failedSince(mark, []string{"127.0.0.2"})
		if r == nil || !r.refused || !strings.Contains(r.err.Error(), "127.0.0.2") {
			t.Errorf("the proxy recorded no refusal of 127.0.0.2 (got %+v)", r)
		}
		if n := refusedHits.Load(); n != 0 {
			t.Errorf("the refused server got %d requests", n)
		}
	})

	t.Run("CallerContext", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := b.Goto(cctx, site.URL+"/hang")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Goto of a page that never answers, with a 300ms context: error = %v, want the deadline", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Goto returned after %v, long after its context ended", d)
		}
		// The browser still works.
		if title := mustGoto(t, b, site.URL); title != "Onion Test" {
			t.Errorf("after a cancelled goto, title %q", title)
		}
	})

	t.Run("SamePageFragment", func(t *testing.T) {
		mustGoto(t, b, site.URL)
		if title := mustGoto(t, b, site.URL+"/#next"); title != "Onion Test" {
			t.Errorf("goto a fragment of the page: title %q", title)
		}
	})

	t.Run("RecoversFromCrash", func(t *testing.T) {
		b.mu.Lock()
		root := b.root
		pid := chromedp.FromContext(root).Browser.Process().Pid
		b.mu.Unlock()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-root.Done() // chromedp has seen Chromium go
		if title := mustGoto(t, b, site.URL); title != "Onion Test" {
			t.Errorf("after a crash, title %q", title)
		}
		if tabs, err := b.ListTabs(ctx); err != nil || len(tabs) != 1 || tabs[0].Name != "main" {
			t.Errorf("after a crash, ListTabs = %+v, %v; want a fresh main tab", tabs, err)
		}
	})

	t.Run("Close", func(t *testing.T) {
		b.mu.Lock()
		pid := chromedp.FromContext(b.root).Browser.Process().Pid
		proxyAddr := b.proxy.ln.Addr().String()
		b.mu.Unlock()
		profile := userDataDir(t, pid)

		// Close cuts short a call in progress.
		for len(hung) > 0 {
			<-hung // from CallerContext
		}
		gotoErr := make(chan error, 1)
		go func() {
			_, err := b.Goto(ctx, site.URL+"/hang")
			gotoErr <- err
		}()
		select {
		case <-hung:
		case err := <-gotoErr:
			t.Fatalf("Goto(/hang) returned before the page answered: %v", err)
		}
		start := time.Now()
		if err := b.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		t.Logf("close, with a goto in progress: %v", time.Since(start))
		if err := <-gotoErr; !errors.Is(err, errBrowserClosed) {
			t.Errorf("the goto in progress during Close: error = %v, want %v", err, errBrowserClosed)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("Chromium (pid %d) is still there after Close: kill -0 gave %v", pid, err)
		}
		if left := processesUsing(t, profile); len(left) > 0 {
			t.Errorf("Chromium's helper processes %v outlived Close", left)
		}
		if _, err := os.Stat(profile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the profile directory %s is still there: %v", profile, err)
		}
		if c, err := net.Dial("tcp", proxyAddr); err == nil {
			c.Close()
			t.Errorf("the proxy still accepts connections on %s", proxyAddr)
		}
		if err := b.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := b.Goto(ctx, site.URL); !errors.Is(err, errBrowserClosed) {
			t.Errorf("Goto after Close: error = %v, want %v", err, errBrowserClosed)
		}
	})
}

// TestBrowserRefusesLoopbackByDefault checks the address policy before
// anything starts: without BrowserAllowAddresses, loopback is refused.
func TestBrowserRefusesLoopbackByDefault(t *testing.T) {
	b := NewBrowser()
	defer b.Close()
	_, err := b.Goto(t.Context(), "http://127.0.0.1:8080/admin")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("Goto(loopback) error = %v, want a refusal naming 127.0.0.1 as loopback", err)
	}
	for _, url := range []string{"file:///etc/passwd", "about:blank", "javascript:alert(1)"} {
		if _, err := b.Goto(t.Context(), url); err == nil || !strings.Contains(err.Error(), "not allowed") {
			t.Errorf("Goto(%s) error = %v, want a refusal", url, err)
		}
	}
	if b.root != nil {
		t.Error("a refused goto started Chromium")
	}
}

// TestBrowserNoChromium checks the error when the executable is missing.
func TestBrowserNoChromium(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Setenv("CHROME_PATH", filepath.Join(t.TempDir(), "no-such-chromium"))
	b := NewBrowser(BrowserAllowAddresses(netip.MustParsePrefix("127.0.0.0/8")))
	defer b.Close()
	_, err := b.Goto(t.Context(), "http://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), "CHROME_PATH") {
		t.Errorf("error = %v, want one naming CHROME_PATH", err)
	}
}

// TestBrowserTimeout checks that BrowserTimeout bounds a call, Chromium's
// start included.
func TestBrowserTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	skipWithoutChromium(t)
	// Chromium takes about a second to start, so it is stopped half-way.
	b := NewBrowser(BrowserTimeout(100*time.Millisecond), BrowserAllowAddresses(netip.MustParsePrefix("127.0.0.0/8")))
	defer b.Close()
	start := time.Now()
	_, err := b.Goto(t.Context(), "http://127.0.0.1:1/")
	t.Logf("goto gave up after %v", time.Since(start))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "within 100ms") {
		t.Errorf("error = %v, want the browser's timeout", err)
	}
	if b.root != nil {
		t.Error("Chromium counts as started after its start timed out")
	}
}

// TestBrowserTools checks the tools onion makes of a Browser, without
// starting Chromium.
func TestBrowserTools(t *testing.T) {
	b := NewBrowser()
	defer b.Close()
	tools, err := onion.ToolsFrom(b)
	if err != nil {
		t.Fatal(err)
	}
	intents := map[string]onion.Intent{}
	for _, tool := range tools {
		intents[tool.Name()] = tool.Intent()
		if tool.Description() == "" {
			t.Errorf("tool %s has no description", tool.Name())
		}
	}
	want := map[string]onion.Intent{
		"goto": onion.Write, "page_text": onion.Read, "click": onion.Write, "type_text": onion.Write,
		"screenshot": onion.Write, "new_tab": onion.Write, "switch_tab": onion.Write, "list_tabs": onion.Read,
		"close_tab": onion.Write,
	}
	if len(intents) != len(want) {
		t.Errorf("tools = %v, want exactly %v", intents, want)
	}
	for name, intent := range want {
		if got, ok := intents[name]; !ok {
			t.Errorf("no tool %s", name)
		} else if got != intent {
			t.Errorf("tool %s: intent %q, want %q", name, got, intent)
		}
	}
	if b.root != nil {
		t.Error("making tools started Chromium")
	}
}

// TestBrowserTabSequenceInOneResponse has a model open a tab and load a page
// into it in one response, through an agent: the calls change which tab is
// current, so they must run in the order given, and the page must land in
// the new tab, not in the one that was current before.
func TestBrowserTabSequenceInOneResponse(t *testing.T) {
	skipWithoutChromium(t)
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	var hits atomic.Int64
	site, _ := testSite(t, refusedServer(t, &hits).URL)
	b := NewBrowser(BrowserAllowAddresses(netip.MustParsePrefix("127.0.0.1/32")))
	defer b.Close()
	mustGoto(t, b, site.URL) // the first tab, "main", shows the home page

	s := oniontest.NewServer(t,
		oniontest.ToolCalls(
			oniontest.Call("new_tab", `{"name":"docs"}`),
			oniontest.Call("goto", `{"url":"`+site.URL+`/second"}`),
		),
		oniontest.Text("done"),
	)
	agent, err := onion.NewAgent("browser", b, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close() // closes b too
	res, err := agent.Run(t.Context(), "Open the second page in a new tab called docs.")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.ToolCalls {
		if c.Outcome != onion.Succeeded {
			t.Errorf("%s: %s (%s)", c.Name, c.Outcome, c.Error)
		}
	}
	tabs, err := b.ListTabs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []Tab{
		{Name: "main", URL: site.URL + "/", Title: "Onion Test"},
		{Name: "docs", URL: site.URL + "/second", Title: "Second Page", Current: true},
	}
	if !slices.Equal(tabs, want) {
		t.Errorf("after [new_tab, goto] in one response, ListTabs =\n%+v\nwant\n%+v", tabs, want)
	}
}
