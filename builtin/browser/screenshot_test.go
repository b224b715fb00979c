package browser

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// TestScreenshotShowsTheModelThePicture has a model, through an agent,
// load a page and take a screenshot: the screenshot's tool message carries
// the very PNG saved to disk, after a note of its type and size and before
// the path the tool returns as before. The model's requests go over HTTP
// to oniontest; they are asserted as the loop made them, since the Chat
// Completions wire of package onion sends no images (package openai does).
func TestScreenshotShowsTheModelThePicture(t *testing.T) {
	skipWithoutChromium(t)
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	var hits atomic.Int64
	site, _ := testSite(t, refusedServer(t, &hits).URL)
	shots := t.TempDir()
	b := NewBrowser(BrowserAllowAddresses(netip.MustParsePrefix("127.0.0.1/32")), BrowserScreenshotDir(shots))

	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("goto", `{"url":"`+site.URL+`"}`), oniontest.Call("screenshot", `{"path":"home"}`)),
		oniontest.Text("a page with a form"))
	wire, err := onion.NewAgent("wire", onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		reqs []*loop.Request
	)
	agent, err := onion.NewAgent("browser", b, onion.WithModel(onion.ModelFunc(
		func(ctx context.Context, req *loop.Request, onDelta func(loop.Delta)) (*loop.Response, error) {
			mu.Lock()
			reqs = append(reqs, req)
			mu.Unlock()
			return wire.LanguageModel().Generate(ctx, req, onDelta)
		})))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close() // closes b too
	res, err := agent.Run(t.Context(), "What does the home page look like?")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(shots, "home.png")
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 2 || res.ToolCalls[1].Outcome != onion.Succeeded || !strings.HasSuffix(res.ToolCalls[1].Output, "\n"+path) {
		t.Fatalf("tool calls %+v", res.ToolCalls)
	}
	mu.Lock()
	defer mu.Unlock()
	last := reqs[len(reqs)-1].Messages
	shot := last[len(last)-1]
	want := loop.ImageNote([]onion.Image{{MIMEType: "image/png", Data: saved}}) + "\n" + path
	if shot.Name != "screenshot" || shot.Content != want || len(shot.Images) != 1 ||
		shot.Images[0].MIMEType != "image/png" || string(shot.Images[0].Data) != string(saved) {
		t.Errorf("the screenshot's tool message is %q with %d images, want %q with the saved PNG", shot.Content, len(shot.Images), want)
	}
	if got := s.Requests()[1].ToolResults(); len(got) != 2 || got[1].Content != want {
		t.Errorf("the HTTP request's tool results %+v", got)
	}
}
