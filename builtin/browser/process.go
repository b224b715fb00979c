package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// This file is the browser's process: Chromium found, started with its
// proxy, started afresh after a crash and stopped, and the tail of its
// output kept for the errors that name it.

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
