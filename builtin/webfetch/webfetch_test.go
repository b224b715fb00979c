package webfetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/internal/netpolicy"
	"go.uber.org/goleak"
)

// webFetchCall calls tool with {"url": u} as the model would.
func webFetchCall(t *testing.T, tool *onion.Tool, u string) (string, error) {
	t.Helper()
	args, err := json.Marshal(map[string]string{"url": u})
	if err != nil {
		t.Fatal(err)
	}
	return tool.Call(context.Background(), string(args))
}

// webLoopback4 is where httptest servers listen.
var webLoopback4 = netip.MustParsePrefix("127.0.0.0/8")

func allowLoopback4() WebFetchOption { return AllowAddresses(webLoopback4) }

func TestWebFetchTool(t *testing.T) {
	tool := NewWebFetch()
	if tool.Name() != "web_fetch" || tool.Intent() != onion.Read {
		t.Errorf("tool = %s (%s), want web_fetch (read)", tool.Name(), tool.Intent())
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	if _, ok := schema.Properties["url"]; !ok || len(schema.Properties) != 1 || len(schema.Required) != 1 {
		t.Errorf("schema = %s, want one required property url", tool.Schema())
	}
	if !strings.Contains(tool.Description(), "Private, loopback") {
		t.Errorf("description = %q", tool.Description())
	}
	tr := newWebFetcher().client.Transport.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("transport uses a proxy; it would bypass the address check")
	}
}

func TestWebFetchArticleAsMarkdown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	page, err := os.ReadFile("testdata/web/article.html")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/onion/article", http.StatusFound)
	})
	mux.HandleFunc("/onion/article", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("User-Agent"), "onion-web-fetch") {
			t.Errorf("User-Agent = %q", r.Header.Get("User-Agent"))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	out, err := webFetchCall(t, NewWebFetch(allowLoopback4()), srv.URL+"/start")
	if err != nil {
		t.Fatalf("web_fetch: %v", err)
	}
	wantHead := "Title: Layers of the Onion\nURL: " + srv.URL + "/onion/article\nContent-Type: text/html\n\n"
	if !strings.HasPrefix(out, wantHead) {
		t.Errorf("output starts %q, want %q", out[:min(len(out), 200)], wantHead)
	}
	for _, re := range []string{
		`fleshy layers wrapped around a short stem`,
		`\|\s*Layer\s*\|\s*Thickness\s*\|`,
		`\|\s*-+\s*\|\s*-+\s*\|`,
		`\|\s*Skin\s*\|\s*0\.1 mm\s*\|`,
		`\[more about cutting\]\(` + regexp.QuoteMeta(srv.URL) + `/more/cutting\)`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
	for _, junk := range []string{"<p>", "<table", "About us", "All rights reserved"} {
		if strings.Contains(out, junk) {
			t.Errorf("output contains %q, want only the article as markdown:\n%s", junk, out)
		}
	}
}

func TestWebFetchRefusesLoopback(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer srv.Close()

	_, err := webFetchCall(t, NewWebFetch(), srv.URL+"/")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("web_fetch %s without AllowAddresses = %v, want a refusal naming 127.0.0.1 and loopback", srv.URL, err)
	}
	var ae *netpolicy.AddressError
	if !errors.As(err, &ae) {
		t.Errorf("error %v does not wrap *netpolicy.AddressError", err)
	}
	if hit {
		t.Error("the refused server was reached")
	}
}

// TestWebFetchChecksAtDialTime fetches a host name, not an address:
// "localhost" passes the URL check and resolves to loopback, so only the
// check on the resolved address can refuse it, as it must refuse a public
// name re-pointed at a private address (DNS rebinding).
func TestWebFetchChecksAtDialTime(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello from localhost")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	u := "http://localhost:" + strconv.Itoa(port) + "/"

	_, err := webFetchCall(t, NewWebFetch(), u)
	if err == nil || !strings.Contains(err.Error(), "refused: loopback") {
		t.Fatalf("web_fetch %s = %v, want a loopback refusal at dial time", u, err)
	}
	var ae *netpolicy.AddressError
	if !errors.As(err, &ae) || !ae.Addr.IsLoopback() {
		t.Errorf("error %v does not carry the refused loopback address", err)
	}

	out, err := webFetchCall(t, NewWebFetch(AllowAddresses(webLoopback4, netip.MustParsePrefix("::1/128"))), u)
	if err != nil || !strings.HasSuffix(out, "hello from localhost") {
		t.Errorf("web_fetch %s with loopback allowed = %q, %v", u, out, err)
	}
}

func TestWebFetchRedirectIntoRefusedRange(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	v6 := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the IPv6 loopback server was reached")
	}))
	v6URL := "http://[::1]:1/"
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		v6.Listener = ln
		v6.Start()
		defer v6.Close()
		v6URL = v6.URL + "/"
	}

	tests := []struct {
		location string
		want     []string
	}{
		{"http://169.254.169.254/latest/meta-data/", []string{"redirected to http://169.254.169.254/latest/meta-data/", "169.254.169.254 refused", "cloud metadata"}},
		{v6URL, []string{"::1 refused: loopback"}},
		{"http://[::ffff:10.0.0.1]/", []string{"IPv4-mapped 10.0.0.1 is private"}},
		{"http://0x0a000001/", []string{"10.0.0.1 refused: private"}},
		{"file:///etc/passwd", []string{`scheme "file" is not allowed`}},
		{"http://user:pw@example.com/", []string{"user info"}},
	}
	for _, tt := range tests {
		t.Run(tt.location, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", tt.location)
				w.WriteHeader(http.StatusFound)
			}))
			defer srv.Close()
			_, err := webFetchCall(t, NewWebFetch(allowLoopback4()), srv.URL+"/go")
			if err == nil {
				t.Fatalf("redirect to %s was followed", tt.location)
			}
			for _, w := range append(tt.want, "fetch "+srv.URL+"/go") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestWebFetchRedirectLimit(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// /hop/n redirects n more times, then answers.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n > 0 {
			http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "arrived")
	}))
	defer srv.Close()
	tool := NewWebFetch(allowLoopback4())

	out, err := webFetchCall(t, tool, srv.URL+"/hop/5")
	if err != nil || !strings.Contains(out, "URL: "+srv.URL+"/hop/0\n") || !strings.HasSuffix(out, "arrived") {
		t.Errorf("5 redirects: %q, %v; want the page after them", out, err)
	}
	_, err = webFetchCall(t, tool, srv.URL+"/hop/6")
	if err == nil || !strings.Contains(err.Error(), "stopped after 5 redirects") {
		t.Errorf("6 redirects: %v, want stopped after 5 redirects", err)
	}
}

func TestWebFetchCutsLargeBody(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, strings.Repeat("a", 1023)+"é"+strings.Repeat("b", 100_000))
	}))
	defer srv.Close()

	out, err := webFetchCall(t, NewWebFetch(allowLoopback4(), MaxBodyBytes(1024)), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, content, _ := strings.Cut(out, "\n\n")
	want := strings.Repeat("a", 1023) + "\n\n[web_fetch: content cut here: the response is larger than 1 KiB and the rest was not read]"
	if content != want {
		t.Errorf("content = %q..., want 1023 bytes (the cut rune dropped) and the marker %q", content[1000:], want[1000:])
	}
}

func TestWebFetchRefusesContentType(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01")
	mux := http.NewServeMux()
	mux.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(png)
	})
	mux.HandleFunc("/sniffed", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no header: web_fetch sniffs
		w.Write(png)
	})
	mux.HandleFunc("/pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write([]byte("%PDF-1.7"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tool := NewWebFetch(allowLoopback4())
	for path, ctype := range map[string]string{"/declared": "image/png", "/sniffed": "image/png", "/pdf": "application/pdf"} {
		_, err := webFetchCall(t, tool, srv.URL+path)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("content type %q is not supported", ctype)) {
			t.Errorf("%s: %v, want content type %s refused", path, err, ctype)
		}
	}
}

func TestWebFetchTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "first part")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release) // before srv.Close: handlers must return for Close to

	tool := NewWebFetch(allowLoopback4(), FetchTimeout(200*time.Millisecond))
	for _, path := range []string{"/slow-headers", "/slow-body"} {
		_, err := webFetchCall(t, tool, srv.URL+path)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no complete answer within 200ms") {
			t.Errorf("%s: %v, want a timeout after 200ms", path, err)
		}
	}
}

func TestWebFetchPassesThrough(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name, ctype, body, want, wantType string
	}{
		{"json", "application/json", `{"layers": [1, 2, 3], "name": "onion"}`, `{"layers": [1, 2, 3], "name": "onion"}`, "application/json"},
		{"problem-json", "application/problem+json; charset=utf-8", `{"title":"x"}`, `{"title":"x"}`, "application/problem+json"},
		{"text", "text/plain; charset=utf-8", "line one\n  <b>not html</b>\n", "line one\n  <b>not html</b>\n", "text/plain"},
		{"markdown", "text/markdown", "# Title\n\n| a | b |\n", "# Title\n\n| a | b |\n", "text/markdown"},
		{"xml", "application/rss+xml", `<rss><channel><title>t</title></channel></rss>`, `<rss><channel><title>t</title></channel></rss>`, "application/rss+xml"},
		{"latin1", "text/plain; charset=iso-8859-1", "caf\xe9 cr\xe8me", "café crème", "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			out, err := webFetchCall(t, NewWebFetch(allowLoopback4()), srv.URL+"/data")
			if err != nil {
				t.Fatal(err)
			}
			want := "URL: " + srv.URL + "/data\nContent-Type: " + tt.wantType + "\n\n" + tt.want
			if out != want {
				t.Errorf("got\n%q\nwant\n%q", out, want)
			}
		})
	}
}

func TestWebFetchErrors(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer srv.Close()
	tool := NewWebFetch(allowLoopback4())
	tests := []struct{ url, want string }{
		{srv.URL + "/missing", "the server answered 404 Not Found"},
		{"ftp://example.com/file", `scheme "ftp" is not allowed`},
		{"not a url", "no scheme"},
		{"http://[::1]/", "::1 refused: loopback"},
		{"http://169.254.169.254/latest/meta-data/iam/", "cloud metadata"},
	}
	for _, tt := range tests {
		_, err := webFetchCall(t, tool, tt.url)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("web_fetch %q = %v, want an error containing %q", tt.url, err, tt.want)
		}
	}
	if _, err := tool.Call(context.Background(), `{}`); err == nil {
		t.Error("web_fetch without url: no error")
	}
}
