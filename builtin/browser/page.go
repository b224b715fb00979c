package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// This file is what the browser does inside a page: input that may start
// a navigation, the hosts a document loads from, elements made ready for a
// click or typing, and the page's text read and capped.

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
