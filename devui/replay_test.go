package devui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// record runs the travel agent against a scripted model through
// oniontest.Record and returns the file it wrote, a streamed run with a
// tool call; responses speaks the Responses API.
func record(t *testing.T, responses bool) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "travel.json")
	t.Run("record", func(t *testing.T) {
		up := oniontest.NewServer(t,
			oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)).WithUsage(50, 7),
			oniontest.Text("It is sunny in Paris.").WithUsage(80, 9))
		rec := oniontest.Record(t, up.URL(), file)
		opts := []any{onion.BaseURL(rec.URL()), onion.APIKey("sk-recorded-0123456789")}
		if responses {
			opts = append(opts, onion.ResponsesAPI())
		}
		agent, err := onion.NewAgent("travel", append(travelTools(t), opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range agent.Stream(context.Background(), "Weather in Paris?") {
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	return file
}

// A recording opened on the page steps through as if it ran: the
// prompt, each model request with its tokens, the tool call with its
// arguments and the output the model read, the answer at the end.
func TestReplay(t *testing.T) {
	file := record(t, false)
	p := openPage(t, nil)
	p.do(chromedp.Click(chromedp.CSS("#tab-replay")), chromedp.SetUploadFiles(chromedp.CSS("#replay-file"), []string{file}))
	p.wait(`!document.getElementById('replay-controls').hidden`)
	if got := p.textOf("#replay-pos"); got != "Step 0 of 2" {
		t.Errorf("before the first step: %q", got)
	}
	if got := p.textOf("#replay-view .replay-prompt"); got != "Weather in Paris?" {
		t.Errorf("the prompt: %q", got)
	}
	p.do(chromedp.Click(chromedp.CSS("#replay-step")))
	p.wait(`document.querySelector('#replay-view .model[data-step="1"]') !== null`)
	if got := p.textOf(`#replay-view .model[data-step="1"]`); !strings.Contains(got, "50 in") || !strings.Contains(got, "7 out") || !strings.Contains(got, "stop reason: tool_calls") {
		t.Errorf("the first request: %q", got)
	}
	if got := p.textOf(`#replay-view .tool .args`); got != `{"city":"Paris"}` {
		t.Errorf("the call's arguments: %q", got)
	}
	if got := eval[string](p, `document.querySelector('#replay-view .tool').dataset.outcome`); got != "" {
		t.Errorf("before the next step, the call has the outcome %q", got)
	}
	p.do(chromedp.Click(chromedp.CSS("#replay-step")))
	p.wait(`document.querySelector('#replay-view .replay-answer') !== null`)
	if got := p.textOf(`#replay-view .tool .output`); got != "sunny in Paris" {
		t.Errorf("the output the model read: %q", got)
	}
	if got := eval[string](p, `document.querySelector('#replay-view .tool').dataset.outcome`); got != "succeeded" {
		t.Errorf("the call's outcome: %q", got)
	}
	if got := p.textOf("#replay-view .replay-answer"); got != "It is sunny in Paris." {
		t.Errorf("the answer: %q", got)
	}
	if got := p.textOf("#replay-pos"); !strings.HasPrefix(got, "Step 2 of 2") {
		t.Errorf("at the end: %q", got)
	}
	// The JSON of the reply, as recorded.
	p.click(`#replay-view .model[data-step="2"] .show-json`)
	p.wait(`document.querySelector('#replay-view .model[data-step="2"] .json-reply')?.textContent.includes('chat.completion.chunk')`)
	p.do(chromedp.Click(chromedp.CSS("#replay-back")))
	p.wait(`document.querySelector('#replay-view .replay-answer') === null && document.querySelector('#replay-view .tool').dataset.outcome === ''`)
}

// parseReplay reads both wires, streamed or not, and a recording from
// another repository's test data as it is.
func TestParseReplay(t *testing.T) {
	u, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, c := range []struct {
		name, file string
	}{
		{"chat completions, streamed", record(t, false)},
		{"responses, streamed", record(t, true)},
		{"chat completions, whole", "../oniontest/testdata/weather_run.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			rp, err := u.parseReplay(filepath.Base(c.file), data)
			if err != nil {
				t.Fatal(err)
			}
			if rp.Prompt != "Weather in Paris?" || len(rp.Steps) != 2 {
				t.Fatalf("prompt %q, %d steps", rp.Prompt, len(rp.Steps))
			}
			first, second := rp.Steps[0], rp.Steps[1]
			if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != "get_weather" || first.ToolCalls[0].Arguments != `{"city":"Paris"}` {
				t.Errorf("the first step's calls: %+v", first.ToolCalls)
			}
			if len(second.Results) != 1 || second.Results[0].CallID != first.ToolCalls[0].ID || second.Results[0].Output != "sunny in Paris" || second.Results[0].Outcome != "succeeded" {
				t.Errorf("the second step's results: %+v (the call was %+v)", second.Results, first.ToolCalls)
			}
			if rp.Answer == "" || second.Text != rp.Answer || first.Usage.PromptTokens == 0 {
				t.Errorf("answer %q, second step %+v", rp.Answer, second)
			}
		})
	}
}

// A recording that is not one is refused with what is wrong.
func TestParseReplayRefuses(t *testing.T) {
	u, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, c := range []struct{ data, want string }{
		{`[]`, "give a file that oniontest.Record wrote"},
		{`{"format":"other/1","exchanges":[]}`, `format "other/1"`},
		{`{"format":"oniontest/recording/1","exchanges":[` + strings.Repeat(`{},`, maxExchanges) + `{}]}`, "more than the 1000"},
	} {
		if _, err := u.parseReplay("x.json", []byte(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40s: %v, want %q", c.data, err, c.want)
		}
	}
}

// FuzzParseReplay: whatever a recording holds, reading it neither fails
// nor panics past its bounds.
func FuzzParseReplay(f *testing.F) {
	if b, err := os.ReadFile("../oniontest/testdata/weather_run.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"format":"oniontest/recording/1","exchanges":[{"request":{"path":"/v1/responses","json":{"input":[{"type":"function_call_output","call_id":"c","output":"x"}]}},"response":{"status":200,"events":["data: {\"type\":\"response.completed\",\"response\":{\"output\":[{\"type\":\"function_call\",\"name\":\"n\"}]}}\n\n"]}}]}`))
	f.Add([]byte(`{"format":"oniontest/recording/1","exchanges":[{"request":{"path":"/v1/chat/completions"},"response":{"status":200,"events":["data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"{\"}}]}}]}\n\n"]}}]}`))
	u, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { u.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		rp, err := u.parseReplay("f.json", data)
		if err != nil {
			return
		}
		for _, st := range rp.Steps {
			if len(st.ToolCalls) > maxReplayCalls || len(st.Results) > maxReplayCalls || len(st.Request) > maxReplayJSON+64 {
				t.Fatalf("a step past its bounds: %d calls, %d results, %d bytes", len(st.ToolCalls), len(st.Results), len(st.Request))
			}
		}
	})
}
