package devui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// travelTools are a read (weather) and a write (book) that fails for
// "Atlantis".
func travelTools(t testing.TB) []any {
	t.Helper()
	weather, err := onion.NewTool(func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	}, onion.Name("get_weather"), onion.Description("Reports the weather in a city."), onion.Read, onion.NoApproval())
	if err != nil {
		t.Fatal(err)
	}
	book, err := onion.NewTool(func(ctx context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		if in.City == "Atlantis" {
			return "", errors.New("no hotel in Atlantis")
		}
		return "booked " + in.City, nil
	}, onion.Name("book"), onion.Description("Books a hotel."), onion.Write, onion.NoApproval())
	if err != nil {
		t.Fatal(err)
	}
	return []any{weather, book}
}

// A tool call shows in the timeline with its arguments, its outcome and
// the output the model read; the model request with its tokens and stop
// reason; the order rule as the loop ran it: the reads side by side, the
// writes in sequence, the write after a failed one marked skipped. The
// cost tab prices the tokens.
func TestTimeline(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(
			oniontest.Call("get_weather", `{"city":"Paris"}`),
			oniontest.Call("get_weather", `{"city":"Rome"}`),
			oniontest.Call("book", `{"city":"Atlantis"}`),
			oniontest.Call("book", `{"city":"Rome"}`),
		).WithUsage(120, 30),
		oniontest.Text("Rome is sunny, but I could not book Atlantis.").WithUsage(200, 12),
	)
	agent, err := onion.NewAgent("travel", append(travelTools(t), onion.BaseURL(s.URL()), onion.APIKey("test"), onion.Model("gpt-4o-mini"))...)
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{agent}, Prices(map[string]Price{"gpt-4o-mini": {Input: 0.15, Output: 0.6}}))
	p.send("Weather in Paris and Rome, and book Atlantis then Rome")
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)
	p.wait(`document.querySelectorAll('#timeline .tool[data-outcome]:not([data-outcome=""])').length === 4`)

	paris := `#timeline .tool[data-call-id="call_1"]`
	if got := p.textOf(paris + " .args"); got != `{"city":"Paris"}` {
		t.Errorf("the arguments shown: %q", got)
	}
	if got := p.textOf(paris + " .badge.outcome"); !strings.Contains(got, "succeeded") {
		t.Errorf("the outcome shown: %q", got)
	}
	if got := p.textOf(paris + " .output"); got != "sunny in Paris" {
		t.Errorf("the output shown: %q", got)
	}
	// The order rule: reads side by side, writes in sequence.
	reads := eval[[]string](p, `[...document.querySelectorAll('#timeline .side-by-side > .tool')].map(e => e.dataset.callId)`)
	writes := eval[[]string](p, `[...document.querySelectorAll('#timeline .in-sequence > .tool')].map(e => e.dataset.callId + ':' + e.dataset.outcome)`)
	if strings.Join(reads, " ") != "call_1 call_2" || strings.Join(writes, " ") != "call_3:failed call_4:skipped" {
		t.Errorf("reads %v, writes %v", reads, writes)
	}
	if got := p.textOf(`#timeline .tool[data-call-id="call_4"]`); !strings.Contains(got, "skipped") || !strings.Contains(got, "did not run") {
		t.Errorf("the skipped write does not say so in words: %q", got)
	}
	if got := p.textOf(`#timeline .tool[data-call-id="call_3"] .call-error`); !strings.Contains(got, "no hotel in Atlantis") {
		t.Errorf("the failed write's error: %q", got)
	}
	if got := p.textOf("#timeline .round h3"); !strings.Contains(got, "2 reads side by side") || !strings.Contains(got, "2 writes in sequence") || !strings.Contains(got, "1 skipped") {
		t.Errorf("the round's title: %q", got)
	}
	// The model requests: tokens, stop reason.
	first := p.textOf(`#timeline .model[data-step="1"]`)
	for _, want := range []string{"120 in", "30 out", "stop reason: tool_calls", "gpt-4o-mini", "4 tool calls"} {
		if !strings.Contains(first, want) {
			t.Errorf("model request 1 does not show %q: %q", want, first)
		}
	}
	if got := p.textOf(`#timeline .model[data-step="2"]`); !strings.Contains(got, "stop reason: stop") || !strings.Contains(got, "Rome is sunny") {
		t.Errorf("model request 2: %q", got)
	}
	// Cost: 320 tokens in at $0.15, 42 out at $0.60 per million.
	p.do(chromedp.Click(chromedp.CSS("#tab-cost")))
	p.wait(`document.querySelector('#cost-models tbody tr') !== null`)
	if got := p.textOf("#cost-models tbody tr"); !strings.Contains(got, "gpt-4o-mini") || !strings.Contains(got, "320") || !strings.Contains(got, "$0.000073") {
		t.Errorf("the cost by model: %q", got)
	}
	if got := p.textOf("#cost-runs tbody tr"); !strings.Contains(got, "$0.000073") {
		t.Errorf("the cost by run: %q", got)
	}
}

// An agent given as a tool runs inside the run: its model requests and
// tool calls show in the timeline with the path of agents, and the
// answer shown is the lead's.
func TestTimelineSubAgent(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("reader", `{"task":"Weather in Paris?"}`)),
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
		oniontest.Text("Sunny in Paris, says the weather."),
		oniontest.Text("The reader says Paris is sunny."),
	)
	reader, err := onion.NewAgent("reader", append(travelTools(t)[:1], onion.BaseURL(s.URL()), onion.APIKey("test"))...)
	if err != nil {
		t.Fatal(err)
	}
	lead, err := onion.NewAgent("lead", reader, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	p := openPage(t, []*onion.Agent{lead})
	p.send("Ask the reader about Paris")
	p.wait(`document.querySelector('.turn.assistant')?.dataset.status === 'done'`)
	if got := p.textOf(".turn.assistant .answer"); got != "The reader says Paris is sunny." {
		t.Errorf("the answer: %q", got)
	}
	steps := eval[[]string](p, `[...document.querySelectorAll('#timeline .model')].map(e => e.querySelector('.line').textContent)`)
	if len(steps) != 4 || !strings.Contains(steps[1], "by lead → reader") || !strings.Contains(steps[0], "by lead") || strings.Contains(steps[0], "reader") {
		t.Errorf("the model requests: %q", steps)
	}
	if got := p.textOf(`#timeline .tool[data-call-id="call_2"]`); !strings.Contains(got, "get_weather") || !strings.Contains(got, "sunny in Paris") {
		t.Errorf("the reader's call: %q", got)
	}
	if got := eval[string](p, `[...document.querySelectorAll('#timeline .round h3')].map(e => e.textContent).join(' | ')`); !strings.Contains(got, "(by lead → reader)") {
		t.Errorf("the rounds: %q", got)
	}
}
