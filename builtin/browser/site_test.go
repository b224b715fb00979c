package browser

import (
	"bytes"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
)

// This file is the site the browser tests visit and the helpers that
// drive and watch the browser.

// skipWithoutChromium skips tests that need a real Chromium when there is none.
func skipWithoutChromium(t *testing.T) {
	t.Helper()
	if _, err := findChromium(); err != nil {
		t.Skipf("chromium is not installed (%v); CI installs it with apt-get install chromium", err)
	}
}

// testSite serves the pages the browser tests drive. refused is the base URL
// of a server on 127.0.0.2, which the tests' policy refuses. hung receives a
// value when a request for /hang arrives, which is answered only when its
// client goes away.
func testSite(t *testing.T, refused string) (srv *httptest.Server, hung <-chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	hanging := make(chan struct{}, 8)
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Onion Test", `
<h1 id="h">Hello, onion</h1>
<p id="para">A paragraph of <b>visible</b> text.</p>
<p id="hidden" style="display:none">hidden text</p>
<button id="btn" onclick="document.getElementById('out').textContent = 'clicked'">Press</button>
<button id="alert" onclick="alert('hi'); document.getElementById('out').textContent = 'after the alert'">Alert</button>
<div id="out">not yet</div>
<input id="in" value="old" oninput="document.getElementById('echo').textContent = this.value">
<div id="echo"></div>
<a id="next" href="/second">next page</a>
<form action="/search"><input id="q" name="q"></form>`)
	})
	mux.HandleFunc("GET /second", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Second Page", `<p id="msg">You made it.</p>`)
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Results", `<p id="results">results for `+html.EscapeString(r.URL.Query().Get("q"))+`</p>`)
	})
	mux.HandleFunc("GET /long", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Long", `<p id="long">`+strings.Repeat("x", maxPageText+500)+`</p>`)
	})
	mux.HandleFunc("GET /missing", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		page(w, "Not Here", "gone")
	})
	mux.HandleFunc("GET /data", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("GET /redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, refused+"/", http.StatusFound)
	})
	mux.HandleFunc("GET /redirect-tls", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https"+strings.TrimPrefix(refused, "http")+"/", http.StatusFound)
	})
	mux.HandleFunc("GET /hang", func(w http.ResponseWriter, r *http.Request) {
		hanging <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	// Every way a page reaches another server, pointed at the refused one:
	// a synchronous XMLHttpRequest and an <img> (both finish before the
	// load event, so goto returns after them), and a fetch(), which ends
	// later. A same-origin request shows that requests work at all.
	mux.HandleFunc("GET /subresources", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Subresources", `
<div id="same"></div><div id="xhr"></div><div id="img"></div><div id="fetch"></div>
<img src="`+refused+`/pixel.png"
	onload="document.getElementById('img').textContent = 'img loaded'"
	onerror="document.getElementById('img').textContent = 'img blocked'">
<script>
function get(url) {
	try {
		const x = new XMLHttpRequest();
		x.open("GET", url, false);
		x.send();
		return x.status === 200 ? "got:" + x.responseText : "status:" + x.status;
	} catch (e) {
		return "blocked";
	}
}
document.getElementById("same").textContent = get("/data");
document.getElementById("xhr").textContent = get("`+refused+`/data");
fetch("`+refused+`/data")
	.then(r => r.text())
	.then(t => { document.getElementById("fetch").textContent = "got:" + t; })
	.catch(() => { document.getElementById("fetch").textContent = "blocked"; });
</script>`)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv, hanging
}

// refusedServer is a server on 127.0.0.2 that would answer anyone (CORS
// included); hits counts the requests that reached it.
func refusedServer(t *testing.T, hits *atomic.Int64) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "secret")
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// waitFor waits, inside the page, until the JavaScript condition holds: it
// is checked at once and again on every change of the DOM.
func waitFor(t *testing.T, b *Browser, cond string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	ctx, done := b.bound(t.Context(), b.current.ctx)
	defer done()
	js := `new Promise(resolve => {
		const check = () => (` + cond + `);
		if (check()) return resolve(true);
		const watch = new MutationObserver(() => { if (check()) { watch.disconnect(); resolve(true); } });
		watch.observe(document, {subtree: true, childList: true, characterData: true});
	})`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("waiting for %s: %v", cond, causeOf(ctx, err))
	}
}

func mustGoto(t *testing.T, b *Browser, url string) string {
	t.Helper()
	title, err := b.Goto(t.Context(), url)
	if err != nil {
		t.Fatalf("Goto(%s): %v", url, err)
	}
	return title
}

func mustText(t *testing.T, b *Browser, selector string) string {
	t.Helper()
	text, err := b.PageText(t.Context(), selector)
	if err != nil {
		t.Fatalf("PageText(%q): %v", selector, err)
	}
	return text
}

// userDataDir reads Chromium's --user-data-dir from its command line.
func userDataDir(t *testing.T, pid int) string {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("read Chromium's command line: %v", err)
	}
	for _, arg := range strings.Split(string(raw), "\x00") {
		if dir, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
			return dir
		}
	}
	t.Fatalf("Chromium's command line has no --user-data-dir: %q", raw)
	return ""
}

// processesUsing lists the pids whose command line mentions s.
func processesUsing(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(raw, []byte(s)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
