package devui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

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

// A conversation saved from the page is the JSON onion run -session
// holds; loaded back, it continues: the model is sent what came before.
func TestConversationSavedAndLoaded(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("Nice to meet you, Ada."), oniontest.Text("Your name is Ada."))
	agent, err := onion.NewAgent("friend", onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})
	p.send("My name is Ada")
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)
	p.do(chromedp.Click(chromedp.CSS("#save-conv")))
	p.wait(`!document.getElementById('saved').hidden && document.getElementById('saved-json').textContent.length > 0`)
	saved := p.textOf("#saved-json")

	// The same JSON as the onion command's -session file.
	var msgs []onion.Message
	if err := json.Unmarshal([]byte(saved), &msgs); err != nil {
		t.Fatalf("the saved conversation is not a JSON array of messages: %v\n%s", err, saved)
	}
	want := []onion.Message{{Role: onion.RoleUser, Content: "My name is Ada"}, {Role: onion.RoleAssistant, Content: "Nice to meet you, Ada."}}
	if !reflect.DeepEqual(msgs, want) {
		t.Fatalf("saved %+v, want %+v", msgs, want)
	}
	file := filepath.Join(t.TempDir(), "ada.json")
	if err := os.WriteFile(file, []byte(saved), 0o600); err != nil {
		t.Fatal(err)
	}
	conv := agent.NewConversation()
	if err := conv.UnmarshalHistory([]byte(saved)); err != nil {
		t.Fatalf("Conversation.UnmarshalHistory refuses what the page saved: %v", err)
	}

	p.do(chromedp.SetUploadFiles(chromedp.CSS("#load-conv"), []string{file}))
	p.wait(`document.querySelectorAll('#conv-list li').length === 2 && document.getElementById('conv-title').textContent === 'ada.json'`)
	if got := p.textOf("#turns .turn.earlier"); !strings.Contains(got, "My name is Ada") {
		t.Errorf("the loaded conversation does not show its earlier turns: %q", got)
	}
	p.send("What is my name?")
	p.wait(`[...document.querySelectorAll('.turn.assistant')].some(e => e.dataset.status === 'done' && e.textContent.includes('Your name is Ada.'))`)
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var sent []string
	for _, m := range reqs[1].Body.Messages {
		sent = append(sent, m.Role+": "+m.Content)
	}
	if got := strings.Join(sent[1:], " | "); got != "user: My name is Ada | assistant: Nice to meet you, Ada. | user: What is my name?" {
		t.Errorf("the loaded conversation's request sent %q", got)
	}
}

// Stop cancels a run from the page: a write in flight ends
// outcome_unknown, as everywhere.
func TestStopRun(t *testing.T) {
	started := make(chan struct{})
	slow, err := onion.NewTool(func(ctx context.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}, onion.Name("upload"), onion.Description("Uploads a file."), onion.Write, onion.NoApproval())
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("upload", `{"path":"big.iso"}`)))
	agent, err := onion.NewAgent("uploader", slow, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})
	p.send("Upload big.iso")
	<-started
	p.wait(`!document.getElementById('stop').disabled`)
	p.do(chromedp.Click(chromedp.CSS("#stop")))
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'stopped'`)
	p.wait(`document.querySelector('#timeline .tool[data-call-id]')?.dataset.outcome === 'outcome_unknown'`)
	if got := p.textOf("#timeline .tool .output"); !strings.HasPrefix(got, "outcome unknown:") {
		t.Errorf("the cut write's output: %q", got)
	}
}
