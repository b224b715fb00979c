package devui

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// screenshotFile is the README's picture of the page.
const screenshotFile = "../docs/devui.png"

// TestScreenshot drives the page through a run with tool calls and one
// waiting for approval, and takes its picture; with -update it writes
// the README's (docs/devui.png).
func TestScreenshot(t *testing.T) {
	pay, err := onion.NewTool(func(ctx context.Context, in struct {
		City   string `json:"city"`
		Nights int    `json:"nights"`
	}) (string, error) {
		return "booked", nil
	}, onion.Name("pay_hotel"), onion.Description("Pays for a hotel."), onion.Write, onion.RequireApproval())
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(
			oniontest.Call("get_weather", `{"city":"Paris"}`),
			oniontest.Call("get_weather", `{"city":"Rome"}`),
			oniontest.Call("book", `{"city":"Atlantis"}`),
			oniontest.Call("book", `{"city":"Rome"}`),
		).WithUsage(412, 64),
		oniontest.Text("Paris and Rome are sunny. Atlantis has no hotel, so I did not book Rome either: the bookings go in order.").WithUsage(530, 28),
		oniontest.ToolCalls(oniontest.Call("pay_hotel", `{"city":"Rome","nights":3}`)).WithUsage(610, 21),
		oniontest.Text("I did not pay."),
	)
	agent, err := onion.NewAgent("travel", append(travelTools(t), pay, onion.BaseURL(s.URL()), onion.APIKey("test"), onion.Model("gpt-4o-mini"))...)
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent}, Prices(map[string]Price{"gpt-4o-mini": {Input: 0.15, Output: 0.6}}))
	p.send("What is the weather in Paris and Rome? Then book Atlantis, then Rome.")
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)
	p.send("Pay for three nights in Rome")
	p.wait(`document.querySelector('#approval-list li') !== null`)
	p.click(`.turn.assistant[data-run] button`) // the first run's timeline
	p.wait(`document.querySelectorAll('#timeline .tool').length === 4`)
	shot, err := chromedp.Run(p.tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(shot)); err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(screenshotFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(screenshotFile, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.click("#approval-list li button.deny")
	p.wait(`[...document.querySelectorAll('.turn.assistant')].every(e => e.dataset.status === 'done')`)
}
