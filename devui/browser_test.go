package devui

import (
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// A prompt sent from the page streams its answer: the page shows the
// first words while the model is still sending the rest.
func TestPromptStreams(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Once upon a time a brave little onion grew tall."))
	base, release := gate(t, s.URL(), "brave")
	agent, err := onion.NewAgent("storyteller", onion.BaseURL(base), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})
	p.send("Tell me a story")
	p.wait(`(document.querySelector('.turn.assistant .answer') || {}).textContent?.includes('brave')`)
	if got := p.textOf(".turn.assistant .answer"); strings.Contains(got, "tall.") {
		t.Fatalf("the whole answer is there before the model sent it: %q", got)
	}
	if got := p.textOf(".turn.assistant"); !strings.Contains(got, "running") {
		t.Errorf("mid-stream, the turn does not say it runs: %q", got)
	}
	close(release)
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)
	if got := p.textOf(".turn.assistant .answer"); got != "Once upon a time a brave little onion grew tall." {
		t.Errorf("the answer: %q", got)
	}
	if got := p.textOf(".turn.user .answer"); got != "Tell me a story" {
		t.Errorf("the prompt shown: %q", got)
	}
}
