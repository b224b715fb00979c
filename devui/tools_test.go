package devui

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/onionkit/onion"
)

// taskArgs are the arguments of add_task: a form has a field of each
// kind for them.
type taskArgs struct {
	Text     string   `json:"text" jsonschema:"description=what to do"`
	Priority int      `json:"priority,omitempty"`
	Urgent   bool     `json:"urgent,omitempty"`
	List     string   `json:"list" jsonschema:"enum=home,enum=work"`
	Tags     []string `json:"tags,omitempty"`
}

// A tool called from its form on the page returns what Tool.Call returns,
// errors included; a tool that needs approval runs only when the form
// says so.
func TestToolForm(t *testing.T) {
	add, err := onion.NewTool(func(ctx context.Context, in taskArgs) (string, error) {
		if in.Text == "fail" {
			return "", errors.New("the list is full")
		}
		return fmt.Sprintf("added %q to %s (priority %d, urgent %v, tags %v)", in.Text, in.List, in.Priority, in.Urgent, in.Tags), nil
	}, onion.Name("add_task"), onion.Description("Adds a task to a list."), onion.Write, onion.NoApproval())
	if err != nil {
		t.Fatal(err)
	}
	var wiped bool
	wipe, err := onion.NewTool(func(ctx context.Context, in struct{}) (string, error) {
		wiped = true
		return "wiped", nil
	}, onion.Name("wipe"), onion.Description("Removes every task."), onion.Delete, onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	agent, err := onion.NewAgent("todo", add, wipe, onion.BaseURL("http://127.0.0.1:9/v1"), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent})
	p.do(chromedp.Click(chromedp.CSS("#tab-tools")))
	card := `#tools .tool-card[data-tool="add_task"]`
	p.wait(`document.querySelector('` + card + `') !== null`)
	if got := p.textOf(card + " .schema"); got == "" {
		t.Error("the tool's schema is not shown")
	}
	p.do(
		chromedp.Click(chromedp.CSS(card+" summary")),
		chromedp.SendKeys(chromedp.CSS(card+" [name=text]"), "buy milk"),
		chromedp.SendKeys(chromedp.CSS(card+" [name=priority]"), "2"),
		chromedp.Click(chromedp.CSS(card+" [name=urgent]")),
		chromedp.SetValue(chromedp.CSS(card+" [name=list]"), `"work"`),
		chromedp.SendKeys(chromedp.CSS(card+" [name=tags]"), `["dairy"]`),
		chromedp.Click(chromedp.CSS(card+" button[type=submit]")),
	)
	p.wait(`document.querySelector('` + card + ` .call-output') !== null`)
	want, err := add.Call(context.Background(), `{"text":"buy milk","priority":2,"urgent":true,"list":"work","tags":["dairy"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.textOf(card + " .call-output"); got != want {
		t.Errorf("the form shows %q, Tool.Call returns %q", got, want)
	}

	// An error: the page shows Tool.Call's error.
	p.do(
		chromedp.SetValue(chromedp.CSS(card+" [name=text]"), "fail"),
		chromedp.Click(chromedp.CSS(card+" button[type=submit]")),
	)
	p.wait(`document.querySelector('` + card + ` .call-output')?.dataset.outcome === 'failed'`)
	_, callErr := add.Call(context.Background(), `{"text":"fail","priority":2,"urgent":true,"list":"work","tags":["dairy"]}`)
	if got := p.textOf(card + " .call-error"); callErr == nil || got != "Error: "+callErr.Error() {
		t.Errorf("the form shows %q, Tool.Call's error is %v", got, callErr)
	}

	// Raw JSON that does not fit: Tool.Call's own words.
	p.do(
		chromedp.Click(chromedp.CSS(card+" [name=__raw]")),
		chromedp.SetValue(chromedp.CSS(card+" [name=__json]"), `{"text":7}`),
		chromedp.Click(chromedp.CSS(card+" button[type=submit]")),
	)
	_, callErr = add.Call(context.Background(), `{"text":7}`)
	p.wait(fmt.Sprintf(`document.querySelector('%s .call-error')?.textContent === %q`, card, "Error: "+callErr.Error()))

	// A tool that needs approval runs only when the form approves it.
	wcard := `#tools .tool-card[data-tool="wipe"]`
	p.do(chromedp.Click(chromedp.CSS(wcard+" summary")), chromedp.Click(chromedp.CSS(wcard+" button[type=submit]")))
	p.wait(`document.querySelector('` + wcard + ` .call-output')?.dataset.outcome === 'denied'`)
	if wiped {
		t.Fatal("the form ran a call that needs approval without it")
	}
	p.do(chromedp.Click(chromedp.CSS(wcard+" [name=__approve]")), chromedp.Click(chromedp.CSS(wcard+" button[type=submit]")))
	p.wait(`document.querySelector('` + wcard + ` .call-output')?.dataset.outcome === 'succeeded'`)
	if got := p.textOf(wcard + " .call-output"); !wiped || got != "wiped" {
		t.Errorf("approved, the call shows %q (ran: %v)", got, wiped)
	}
}
