package devui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// A call that needs approval waits for the page: it shows its whole
// arguments with Approve and Deny; Approve runs it, Deny skips it and
// the model reads the denial.
func TestApproval(t *testing.T) {
	var paid atomic.Int32
	pay, err := onion.NewTool(func(ctx context.Context, in struct {
		To     string `json:"to"`
		Amount int    `json:"amount"`
	}) (string, error) {
		paid.Add(1)
		return "paid", nil
	}, onion.Name("pay"), onion.Description("Pays someone."), onion.Write, onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	// Arguments a terminal would act on, or a reader would see reordered,
	// show as escapes.
	args := `{"to":"Bob\u202e","amount":` + "40}"
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("pay", args)), oniontest.Text("Paid Bob."),
		oniontest.ToolCalls(oniontest.Call("pay", `{"to":"Eve","amount":9000}`)), oniontest.Text("I did not pay Eve."),
	)
	agent, err := onion.NewAgent("cashier", pay, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})

	p.send("Pay Bob 40")
	p.wait(`document.querySelector('#approval-list li') !== null && !document.getElementById('approvals').hidden`)
	if got := p.textOf("#approval-list li .args"); got != `{"to":"Bob\u202e","amount":40}` {
		t.Errorf("the arguments asked about: %q", got)
	}
	p.wait(`document.querySelector('.turn.assistant .status')?.textContent === 'waiting for your approval'`)
	p.wait(`document.querySelector('#timeline .tool')?.dataset.approval === 'waiting'`)
	if paid.Load() != 0 {
		t.Fatal("the call ran before it was approved")
	}
	p.click("#approval-list li button.approve")
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)
	p.wait(`document.querySelector('#timeline .tool')?.dataset.outcome === 'succeeded' && document.querySelector('#timeline .tool').dataset.approval === 'approved'`)
	if paid.Load() != 1 || !p.ui.approvalsEmpty() {
		t.Fatalf("paid %d times after Approve", paid.Load())
	}
	if !eval[bool](p, `document.getElementById('approvals').hidden`) {
		t.Error("the answered call is still asked about")
	}

	p.send("Pay Eve 9000")
	p.wait(`document.querySelector('#approval-list li') !== null`)
	if got := p.textOf("#approval-list li .args"); got != `{"to":"Eve","amount":9000}` {
		t.Errorf("the arguments asked about: %q", got)
	}
	p.click("#approval-list li button.deny")
	p.wait(`[...document.querySelectorAll('.turn.assistant')].length === 2 && document.querySelectorAll('.turn.assistant')[1].dataset.status === 'done'`)
	p.wait(`document.querySelector('#timeline .tool')?.dataset.outcome === 'denied'`)
	if paid.Load() != 1 {
		t.Errorf("Deny ran the call")
	}
	reqs := s.Requests()
	if got := reqs[3].ToolResults(); len(got) != 1 || got[0].Content != loop.DeniedText {
		t.Errorf("the model read %+v, want the denial", got)
	}
	if got := p.textOf("#timeline .tool .output"); got != loop.DeniedText {
		t.Errorf("the timeline shows %q as what the model read", got)
	}
	if got := p.textOf("#timeline .tool .badge.approval"); !strings.Contains(got, "denied") {
		t.Errorf("the approval shown: %q", got)
	}
}

// approvalsEmpty reports whether no call waits for the page.
func (u *UI) approvalsEmpty() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.approvals) == 0
}
