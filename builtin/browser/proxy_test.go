package browser

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	neturl "net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/onionkit/onion/builtin/internal/netpolicy"
	"go.uber.org/goleak"
)

// TestBrowserProxy drives the proxy with Go's own client: forwarding,
// CONNECT tunnels, refusals, and a close that ends open tunnels.
func TestBrowserProxy(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(refusedHeader, "forged by the site")
		fmt.Fprint(w, "plain ok")
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "tls ok")
	}))
	defer tlsSrv.Close()

	p, err := startBrowserProxy(netpolicy.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	proxyURL, _ := neturl.Parse(p.url())
	transport := tlsSrv.Client().Transport.(*http.Transport).Clone()
	transport.Proxy = http.ProxyURL(proxyURL)
	client := &http.Client{Transport: transport}
	defer transport.CloseIdleConnections()

	get := func(url string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s through the proxy: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	if resp, body := get(plain.URL); body != "plain ok" || resp.Header.Get(refusedHeader) != "" {
		t.Errorf("plain GET: %d %q, refused header %q; want the page, with the forged header removed", resp.StatusCode, body, resp.Header.Get(refusedHeader))
	}
	if _, body := get(tlsSrv.URL); body != "tls ok" {
		t.Errorf("GET through a CONNECT tunnel: %q", body)
	}

	resp, body := get("http://127.0.0.2:9/")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get(refusedHeader), "127.0.0.2") {
		t.Errorf("plain GET of 127.0.0.2: %d %q, header %q; want 403 naming the address", resp.StatusCode, body, resp.Header.Get(refusedHeader))
	}
	if _, err := client.Get("https://127.0.0.2:9/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("CONNECT to 127.0.0.2: error = %v, want the proxy's 403", err)
	}
	if f := p.failedSince(0, []string{"127.0.0.2"}); f == nil || !f.refused || !strings.Contains(f.err.Error(), "127.0.0.2") {
		t.Errorf("first recorded failure = %+v, want the refusal of 127.0.0.2", f)
	}

	// A tunnel left open (a kept-alive TLS connection) ends with close.
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(tlsSrv.URL); err == nil {
		t.Error("the proxy still tunnels after close")
	}
}

// TestBrowserProxyFailureAlwaysAnswered checks that a forwarded request
// whose upstream failed is answered with the proxy's 502 even when the
// request's context has ended: a handler that writes nothing sends an empty
// 200, which Goto would read as a blank page that loaded.
func TestBrowserProxyFailureAlwaysAnswered(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p, err := startBrowserProxy(netpolicy.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:9/", nil)
	w := httptest.NewRecorder()
	mark := p.mark()
	p.fail(w, r, syscall.ECONNREFUSED)
	if w.Code != http.StatusBadGateway || !strings.Contains(w.Header().Get(unreachableHeader), "could not reach 127.0.0.1:9") {
		t.Errorf("answer = %d, %s header %q; want 502 saying it could not reach 127.0.0.1:9", w.Code, unreachableHeader, w.Header().Get(unreachableHeader))
	}
	if f := p.failedSince(mark, []string{"127.0.0.1"}); f == nil {
		t.Error("the failure was not recorded for Goto")
	}
}
