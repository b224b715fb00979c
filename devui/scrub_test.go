package devui

import (
	"context"
	"net/http"
	"strings"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/internal/redact"
	"github.com/onionkit/onion/oniontest"
)

const testKey = "sk-test-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"

// A secret streamed a few bytes at a time is never shown, not even in
// part past what cannot tell it from other text; the rest streams with
// at most its last word held back.
func TestStreamScrub(t *testing.T) {
	s := newScrubber([]string{testKey})
	text := "The key is " + testKey + " and then some more words follow it here."
	for _, size := range []int{1, 2, 3, 5, 7, 13, 64} {
		st := streamScrub{s: s}
		var shown strings.Builder
		for i := 0; i < len(text); i += size {
			out := st.add(text[i:min(i+size, len(text))], false)
			shown.WriteString(out)
			if strings.Contains(shown.String(), testKey[:redact.Run]) {
				t.Fatalf("pieces of %d: %q shows the key's start", size, shown.String())
			}
		}
		shown.WriteString(st.add("", true))
		if got, want := shown.String(), "The key is "+redact.Mark+" and then some more words follow it here."; got != want {
			t.Errorf("pieces of %d: shown %q, want %q", size, got, want)
		}
	}
	// Without secrets, every piece shows at once.
	st := streamScrub{s: newScrubber(nil)}
	if got := st.add("Hello wor", false); got != "Hello wor" {
		t.Errorf("with no secret: %q", got)
	}
	// A word waits only while it could still be the start of one.
	st = streamScrub{s: s}
	if got := st.add("Hello wor", false); got != "Hello " {
		t.Errorf("with a secret: %q", got)
	}
}

// The key in the environment never reaches the page: not in a reply that
// streams it, not in a tool's output, not in a request's JSON.
func TestKeysNeverShown(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testKey)
	leak, err := onion.NewTool(func(ctx context.Context, in struct{}) (string, error) {
		return "OPENAI_API_KEY=" + testKey, nil
	}, onion.Name("env"), onion.Description("Prints the environment."), onion.Read, onion.NoApproval())
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("env", `{}`)),
		oniontest.Text("Your key is "+testKey[:20]+" "+testKey[20:]+" and "+testKey+" again."))
	agent, err := onion.NewAgent("leaky", leak, onion.BaseURL(s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})
	p.send("What is my key?")
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)
	p.click(`#timeline .model[data-step="2"] .show-json`)
	p.wait(`document.querySelector('#timeline .model[data-step="2"] .json-reply')?.textContent.includes('again')`)
	html := eval[string](p, `document.documentElement.outerHTML`)
	for _, part := range []string{testKey, testKey[10 : 10+redact.Run]} {
		if strings.Contains(html, part) {
			t.Errorf("the page shows %q", part)
		}
	}
	if !strings.Contains(p.textOf("#timeline .tool .output"), "OPENAI_API_KEY="+redact.Mark) {
		t.Errorf("the tool's output: %q", p.textOf("#timeline .tool .output"))
	}
	if got := p.textOf(".turn.assistant .answer"); !strings.Contains(got, redact.Mark+" again.") {
		t.Errorf("the answer: %q", got)
	}
}

// Through Transport, the page shows each request and reply as they went
// over the wire too, and still no key: no header is kept.
func TestWire(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Hello from the wire."))
	cfg := goopenai.DefaultConfig(testKey)
	cfg.BaseURL = s.URL()
	cfg.HTTPClient = &http.Client{Transport: Transport(nil)}
	agent, err := onion.NewAgent("wired", onion.WithClient(goopenai.NewClientWithConfig(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})
	p.send("Hi")
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)
	p.click(`#timeline .model[data-step="1"] .show-json`)
	p.wait(`document.querySelector('#timeline .wire-reply')?.textContent.includes('chat.completion.chunk')`)
	if got := p.textOf("#timeline .wire-request"); !strings.Contains(got, `"stream": true`) || !strings.Contains(got, `"content": "Hi"`) {
		t.Errorf("the request on the wire: %q", got)
	}
	if html := eval[string](p, `document.documentElement.outerHTML`); strings.Contains(html, testKey[10:10+redact.Run]) {
		t.Error("the page shows the key")
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

// FuzzStreamScrub: however a text with the key in it is cut into pieces,
// no run of the key as long as redact finds is ever shown.
func FuzzStreamScrub(f *testing.F) {
	f.Add("before ", " after", uint64(0x0102030405))
	f.Add("", "", uint64(7))
	f.Add("a\\u00", "%2", uint64(1<<40-1))
	s := newScrubber([]string{testKey})
	f.Fuzz(func(t *testing.T, before, after string, cuts uint64) {
		text := before + testKey + after
		st := streamScrub{s: s}
		var shown strings.Builder
		for i := 0; i < len(text); {
			n := 1 + int(cuts%7)
			cuts = cuts/7 + uint64(i)
			shown.WriteString(st.add(text[i:min(i+n, len(text))], false))
			i += n
		}
		shown.WriteString(st.add("", true))
		out := shown.String()
		for i := 0; i+redact.Run <= len(testKey); i++ {
			if strings.Contains(out, testKey[i:i+redact.Run]) {
				t.Fatalf("shown %q holds %q of the key", out, testKey[i:i+redact.Run])
			}
		}
	})
}
