package devui

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// Every call that is not the page's own is refused: without the token,
// from another origin or site, under another host name (DNS
// rebinding), or as a form; the page itself may not be framed.
func TestGuard(t *testing.T) {
	agent, err := onion.NewAgent("a", onion.BaseURL("http://127.0.0.1:9/v1"), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := New([]*onion.Agent{agent})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	srv := httptest.NewServer(u)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	body := `{"agent":0}`
	for _, c := range []struct {
		name   string
		method string
		path   string
		header map[string]string
		host   string
		want   int
	}{
		{"the page", "GET", "/", nil, "", 200},
		{"the page under localhost", "GET", "/", nil, "localhost" + host[strings.Index(host, ":"):], 200},
		{"a call of the page", "POST", "/api/conversations", map[string]string{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"}, "", 200},
		{"no token", "POST", "/api/conversations", map[string]string{tokenHeader: ""}, "", 403},
		{"a wrong token", "POST", "/api/conversations", map[string]string{tokenHeader: strings.Repeat("0", 64)}, "", 403},
		{"another origin", "POST", "/api/conversations", map[string]string{"Origin": "http://evil.example"}, "", 403},
		{"another port", "POST", "/api/conversations", map[string]string{"Origin": "http://127.0.0.1:1"}, "", 403},
		{"a null origin", "POST", "/api/conversations", map[string]string{"Origin": "null"}, "", 403},
		{"another site", "POST", "/api/conversations", map[string]string{"Sec-Fetch-Site": "cross-site"}, "", 403},
		{"a sibling site", "GET", "/api/events", map[string]string{"Sec-Fetch-Site": "same-site"}, "", 403},
		{"a rebound name", "GET", "/", nil, "evil.example" + host[strings.Index(host, ":"):], 403},
		{"a rebound name with the token", "POST", "/api/conversations", nil, "rebind.evil.example", 403},
		{"a form", "POST", "/api/conversations", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "", 415},
		{"a cross-site navigation to the page", "GET", "/", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}, "", 200},
		{"a cross-site fetch of the page", "GET", "/", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}, "", 403},
		{"the events without the token", "GET", "/api/events", map[string]string{tokenHeader: ""}, "", 403},
		{"a step's JSON without the token", "GET", "/api/runs/r1/steps/1", map[string]string{tokenHeader: ""}, "", 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rd io.Reader
			if c.method == "POST" {
				rd = strings.NewReader(body)
			}
			req, err := http.NewRequest(c.method, srv.URL+c.path, rd)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(tokenHeader, u.token)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			if c.host != "" {
				req.Host = c.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			if resp.StatusCode != c.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, c.want, b)
			}
			if c.want == 403 && strings.Contains(string(b), u.token) {
				t.Error("a refused call got the token")
			}
			if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
				t.Error("the response may be framed")
			}
		})
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.convs) != 1 {
		t.Errorf("%d conversations made; only the page's own call may make one", len(u.convs))
	}
}

// A page of another origin open in the same browser gets nothing: its
// calls are refused, it cannot read the page, its token or the event
// stream, and nothing runs.
func TestOtherOriginRefused(t *testing.T) {
	s := oniontest.NewServer(t) // no step: any request fails the test
	agent, err := onion.NewAgent("victim", onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>evil</title><pre id="out"></pre><script>
const ui = `+fmt.Sprintf("%q", p.url)+`;
const out = [];
const note = (s) => { out.push(s); document.getElementById('out').textContent = out.join('\n'); };
(async () => {
  try { const r = await fetch(ui + '/'); note('read the page: ' + (await r.text()).length); } catch (e) { note('page: blocked'); }
  try { await fetch(ui + '/api/conversations', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: '{"agent":0}'}); note('post: sent'); } catch (e) { note('post: blocked'); }
  try { const r = await fetch(ui + '/api/conversations', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-Onion-Token': 'guess'}, body: '{"agent":0}'}); note('cors post: ' + r.status); } catch (e) { note('cors post: blocked'); }
  await new Promise((done) => {
    const es = new EventSource(ui + '/api/events?token=guess');
    es.onmessage = (m) => { note('events: ' + m.data.slice(0, 40)); es.close(); done(); };
    es.onerror = () => { note('events: blocked'); es.close(); done(); };
  });
  const f = document.createElement('iframe');
  f.src = ui + '/';
  f.onload = () => { try { note('frame: ' + f.contentDocument.title); } catch (e) { note('frame: blocked'); } note('done'); };
  document.body.append(f);
})();
</script>`)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) // another origin than the UI's
	p.do(chromedp.Navigate(evilURL))
	p.wait(`document.getElementById('out')?.textContent.includes('done')`)
	got := p.textOf("#out")
	for _, want := range []string{"page: blocked", "cors post: blocked", "events: blocked", "frame: blocked"} {
		if !strings.Contains(got, want) {
			t.Errorf("the other origin's page: %q, want %q", got, want)
		}
	}
	if strings.Contains(got, p.ui.token) {
		t.Error("the other origin read the token")
	}
	// Each fetch was awaited: what landed, landed.
	p.ui.mu.Lock()
	defer p.ui.mu.Unlock()
	if len(p.ui.convs) != 0 || len(p.ui.runs) != 0 {
		t.Errorf("the other origin made %d conversations and %d runs", len(p.ui.convs), len(p.ui.runs))
	}
}
