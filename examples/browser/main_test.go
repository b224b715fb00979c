package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion/builtin/browser"
	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

func TestBrowser(t *testing.T) {
	found := false
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if _, err := exec.LookPath(name); err == nil {
			found = true
			break
		}
	}
	if !found {
		t.Skip("no Chromium on the PATH (chromium, chromium-browser or google-chrome): install it to run this test")
	}

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<!doctype html><html><head><title>Harbour timetable</title></head><body>
<nav>Home · Ferries</nav>
<main><h1>Ferries today</h1><p id="next">The next ferry to Cacilhas leaves at 14:20 from pier 3.</p></main>
<script>document.getElementById("next").insertAdjacentHTML("afterend", "<p>Rendered by script: service normal.</p>")</script>
</body></html>`)
	}))
	t.Cleanup(page.Close)

	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("goto", `{"url":"`+page.URL+`"}`)),
		oniontest.ToolCalls(oniontest.Call("page_text", `{"selector":"main"}`)),
		oniontest.Text("The next ferry to Cacilhas leaves at 14:20 from pier 3. Service is normal."),
	)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")
	b := browser.NewBrowser(
		browser.BrowserAllowAddresses(netip.MustParsePrefix("127.0.0.0/8")),
		browser.BrowserTimeout(60*time.Second),
	)
	var out bytes.Buffer
	if err := run(context.Background(), &out, b, page.URL); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"> Open " + page.URL + " and summarise",
		`  [goto {"url":"` + page.URL + `"}: succeeded]`,
		`  [page_text {"selector":"main"}: succeeded]`,
		"The next ferry to Cacilhas leaves at 14:20 from pier 3. Service is normal.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q\n%s", want, got)
		}
	}

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	var names []string
	for _, tool := range reqs[0].Body.Tools {
		names = append(names, tool.Function.Name)
	}
	if !strings.Contains(","+strings.Join(names, ",")+",", ",goto,") || !strings.Contains(","+strings.Join(names, ",")+",", ",page_text,") {
		t.Errorf("tools = %v", names)
	}
	toolResult := func(r oniontest.Request) string {
		m := r.Body.Messages[len(r.Body.Messages)-1]
		if m.Role != openai.ChatMessageRoleTool {
			t.Fatalf("last message is %s, want a tool result", m.Role)
		}
		return m.Content
	}
	if got := toolResult(reqs[1]); !strings.Contains(got, "Harbour timetable") {
		t.Errorf("goto told the model %q, want the page title", got)
	}
	text := toolResult(reqs[2])
	if !strings.Contains(text, "The next ferry to Cacilhas leaves at 14:20 from pier 3.") ||
		!strings.Contains(text, "Rendered by script: service normal.") {
		t.Errorf("page_text told the model %q, want the main text, script-rendered part included", text)
	}
	if strings.Contains(text, "Home · Ferries") {
		t.Errorf("page_text of main included the nav: %q", text)
	}
}
