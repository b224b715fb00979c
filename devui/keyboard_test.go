package devui

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// The page works from the keyboard: every control has a name a screen
// reader says, a prompt goes with Ctrl+Enter, the tabs follow the arrow
// keys, an approval is answered with Tab and Enter; and every status
// shows in words, not in colour alone.
func TestKeyboard(t *testing.T) {
	pay, err := onion.NewTool(func(ctx context.Context, in struct {
		To string `json:"to"`
	}) (string, error) {
		return "paid", nil
	}, onion.Name("pay"), onion.Description("Pays someone."), onion.Write, onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("pay", `{"to":"Bob"}`)), oniontest.Text("Paid."))
	agent, err := onion.NewAgent("cashier", append(travelTools(t), pay, onion.BaseURL(s.URL()), onion.APIKey("test"))...)
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})

	// Ctrl+Enter in the prompt sends it.
	p.do(chromedp.Focus(chromedp.CSS("#prompt")), chromedp.KeyEvent("Pay Bob"),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.wait(`document.querySelector('#approval-list button.approve') !== null`)
	// Tab reaches Approve (the approvals come first in the page's order),
	// and Enter presses it.
	p.do(chromedp.Focus(chromedp.CSS("#approval-list pre.args")), chromedp.KeyEvent(kb.Tab))
	if got := eval[string](p, `document.activeElement.textContent`); got != "Approve pay" {
		t.Fatalf("Tab from the arguments reaches %q", got)
	}
	p.do(chromedp.KeyEvent(kb.Enter))
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)

	// The tabs: arrow keys move the selection and the focus.
	p.do(chromedp.Focus(chromedp.CSS("#tab-timeline")), chromedp.KeyEvent(kb.ArrowRight))
	p.wait(`document.activeElement.id === 'tab-tools' && document.getElementById('tab-tools').getAttribute('aria-selected') === 'true' && !document.getElementById('panel-tools').hidden`)
	p.wait(`document.querySelectorAll('#tools .tool-card').length === 3`)
	p.do(chromedp.KeyEvent(kb.End))
	p.wait(`document.activeElement.id === 'tab-replay' && !document.getElementById('panel-replay').hidden`)
	p.do(chromedp.KeyEvent(kb.ArrowRight))
	p.wait(`document.activeElement.id === 'tab-timeline'`)

	// Every control has a name: its label, its text or aria-label.
	unnamed := eval[[]string](p, `[...document.querySelectorAll('input, select, textarea, button, [role=tab]')].filter(e => {
		if (e.type === 'hidden') return false;
		const label = (e.labels && [...e.labels].map(l => l.textContent).join('')) || e.getAttribute('aria-label') || (e.tagName === 'BUTTON' ? e.textContent : '');
		return !label.trim();
	}).map(e => e.outerHTML.slice(0, 80))`)
	if len(unnamed) > 0 {
		t.Errorf("controls without a name: %q", unnamed)
	}
	// Each outcome and status is a word on the page.
	for _, want := range []string{"✓ succeeded", "approved", "done"} {
		if !strings.Contains(p.text(), want) {
			t.Errorf("the page does not say %q in words", want)
		}
	}
}
