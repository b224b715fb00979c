package onion_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/anthropic"
	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/oniontest"
)

// This file is the conformance suite every provider passes: the same
// cases, through onion's public API, against oniontest speaking each
// provider's wire. What only a wire can show (reasoning carried byte for
// byte, cached tokens in its usage, its schema dialect, its recorded
// exchanges) is in each provider package's own tests.

// aProvider is one provider as the suite drives it: the options that make
// an agent speak its wire to s, and what differs in how a wire shows two
// of the cases.
type aProvider struct {
	name    string
	options func(t *testing.T, s *oniontest.Server) []any
	// reasoning makes step reply with reasoning the provider asks to get
	// back with the turn; nil when oniontest makes none on the wire.
	reasoning func(step oniontest.Step) oniontest.Step
	// cached makes step report cached prompt tokens, when oniontest can
	// on the wire (Gemini's implicit cache needs no step: it counts the
	// prefix a request shares with an earlier one).
	cached func(step oniontest.Step) oniontest.Step
}

var suiteProviders = []aProvider{
	{"openai-chat", func(t *testing.T, s *oniontest.Server) []any {
		return []any{onion.BaseURL(s.URL()), onion.APIKey("test-key")}
	}, nil, nil},
	{"openai-responses", func(t *testing.T, s *oniontest.Server) []any {
		return []any{onion.BaseURL(s.URL()), onion.APIKey("test-key"), onion.ResponsesAPI()}
	}, nil, nil},
	{"anthropic", func(t *testing.T, s *oniontest.Server) []any {
		m, err := anthropic.New("claude-sonnet-4-5", anthropic.BaseURL(s.AnthropicURL()), anthropic.APIKey("test-key"))
		if err != nil {
			t.Fatal(err)
		}
		return []any{onion.WithModel(m)}
	}, func(step oniontest.Step) oniontest.Step { return step.WithThinking("Oslo first, then answer.") },
		func(step oniontest.Step) oniontest.Step { return step.WithCache(1500, 200) }},
	{"gemini", func(t *testing.T, s *oniontest.Server) []any {
		m, err := gemini.New("gemini-2.5-flash", gemini.BaseURL(s.GeminiURL()), gemini.APIKey("test-key"))
		if err != nil {
			t.Fatal(err)
		}
		return []any{onion.WithModel(m)}
	}, func(step oniontest.Step) oniontest.Step { return step }, // oniontest signs Gemini's calls itself
		func(step oniontest.Step) oniontest.Step { return step }},
}

// suiteAgent is an agent of items on provider p, talking to s.
func suiteAgent(t *testing.T, p aProvider, s *oniontest.Server, items ...any) *onion.Agent {
	t.Helper()
	items = append(append([]any{onion.RetryBackoff(time.Millisecond, 5*time.Millisecond)}, p.options(t, s)...), items...)
	a, err := onion.NewAgent("suite", items...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// CityRain gives the rain forecast for a city.
//
// city: the city
//
//onion:intent read
func CityRain(city string) (string, error) { return "rain in " + city, nil }

// CityReport gives the long weather report of a city.
//
// city: the city
//
//onion:intent read
func CityReport(city string) (string, error) {
	return "report for " + city + ": " + strings.Repeat("rain, wind and clouds; ", 200), nil
}

// CityAlerts gives the weather alerts of a city.
//
// city: the city
//
//onion:intent read
func CityAlerts(city string) (string, error) {
	return "", errors.New("the alerts service has no data for " + city)
}

// Snapshot returns a picture of the dashboard.
//
//onion:intent read
func Snapshot() (onion.Image, error) {
	b, err := os.ReadFile("testdata/dot.png")
	if err != nil {
		return onion.Image{}, err
	}
	return onion.ImageData(b)
}

var conformanceCases = []struct {
	name string
	run  func(t *testing.T, p aProvider)
}{
	{"PlainAnswer", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.Text("Hello."))
		if out, err := suiteAgent(t, p, s).Input(context.Background(), "hi"); err != nil || out != "Hello." {
			t.Fatalf("out %q, err %v", out, err)
		}
	}},
	{"OneTool", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("city_rain", `{"city":"Oslo"}`)), oniontest.Text("Rain."))
		res, err := suiteAgent(t, p, s, CityRain).Run(context.Background(), "Weather in Oslo?")
		if err != nil || res.Output != "Rain." || len(res.ToolCalls) != 1 || res.ToolCalls[0].Output != "rain in Oslo" {
			t.Fatalf("res %+v, err %v", res, err)
		}
		if reqs := s.Requests(); len(reqs) != 2 || !bytes.Contains(reqs[1].Raw, []byte("rain in Oslo")) {
			t.Errorf("the tool's result did not reach the model")
		}
	}},
	{"ParallelTools", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("city_rain", `{"city":"Oslo"}`), oniontest.Call("city_rain", `{"city":"Rome"}`)), oniontest.Text("Both."))
		res, err := suiteAgent(t, p, s, CityRain).Run(context.Background(), "Oslo and Rome?")
		if err != nil || len(res.ToolCalls) != 2 || res.ToolCalls[0].Output != "rain in Oslo" || res.ToolCalls[1].Output != "rain in Rome" {
			t.Fatalf("res %+v, err %v", res, err)
		}
		raw := s.Requests()[1].Raw
		if i, j := bytes.Index(raw, []byte("rain in Oslo")), bytes.Index(raw, []byte("rain in Rome")); i < 0 || j < i {
			t.Errorf("the results went back out of the model's order")
		}
	}},
	{"StreamingTextAndToolCalls", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("city_rain", `{"city":"Oslo"}`)), oniontest.Text("It will rain in Oslo all day."))
		var text strings.Builder
		var started, finished int
		for e, err := range suiteAgent(t, p, s, CityRain).Stream(context.Background(), "Oslo?") {
			if err != nil {
				t.Fatal(err)
			}
			switch e.Kind {
			case onion.EventTextDelta:
				text.WriteString(e.Text)
			case onion.EventToolStarted:
				started++
			case onion.EventToolFinished:
				finished++
			}
		}
		if text.String() != "It will rain in Oslo all day." || started != 1 || finished != 1 {
			t.Errorf("streamed %q, %d started, %d finished", text.String(), started, finished)
		}
		if reqs := s.Requests(); !reqs[0].Stream {
			t.Error("the request did not ask for a stream")
		}
	}},
	{"Ask", func(t *testing.T, p aProvider) {
		type verdict struct {
			Rain bool   `json:"rain"`
			City string `json:"city"`
		}
		s := oniontest.NewServer(t, oniontest.Text(`{"rain":true,"city":"Oslo"}`))
		v, _, err := onion.Ask[verdict](context.Background(), suiteAgent(t, p, s), "Rain in Oslo?")
		if err != nil || !v.Rain || v.City != "Oslo" {
			t.Fatalf("%+v, %v", v, err)
		}
	}},
	{"BudgetStop", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("city_rain", `{"city":"Oslo"}`)).WithUsage(900, 200))
		res, err := suiteAgent(t, p, s, CityRain, onion.TokenBudget(1000)).Run(context.Background(), "Oslo?")
		if err != nil || res.StopReason != onion.StopBudget || res.Usage.TotalTokens != 1100 || len(res.ToolCalls) != 1 {
			t.Fatalf("res %+v, err %v: want a budget stop after the first reply", res, err)
		}
	}},
	{"Compaction", func(t *testing.T, p aProvider) {
		var steps []oniontest.Step
		for _, c := range []string{"Oslo", "Rome", "Lima", "Pune"} {
			steps = append(steps, oniontest.ToolCalls(oniontest.Call("city_report", `{"city":"`+c+`"}`)))
		}
		s := oniontest.NewServer(t, append(steps, oniontest.Text("Rain everywhere."))...)
		res, err := suiteAgent(t, p, s, CityReport, onion.CompactAfter(2000), onion.CompactWith(onion.CompactToolResults)).Run(context.Background(), "Four cities?")
		if err != nil || len(res.Compactions) == 0 {
			t.Fatalf("res %+v, err %v: want a compaction", res, err)
		}
		if last := s.Requests()[4].Raw; bytes.Contains(last, []byte("report for Oslo: rain")) || !bytes.Contains(last, []byte("report for Pune: rain")) {
			t.Errorf("the last request should carry the newest tool result whole and the oldest as a note")
		}
	}},
	{"ImageInPrompt", func(t *testing.T, p aProvider) {
		png, err := os.ReadFile("testdata/dot.png")
		if err != nil {
			t.Fatal(err)
		}
		img, err := onion.ImageData(png)
		if err != nil {
			t.Fatal(err)
		}
		s := oniontest.NewServer(t, oniontest.Text("A dot."))
		ctx := onion.WithImages(context.Background(), img)
		if out, err := suiteAgent(t, p, s).Input(ctx, "What is this?"); err != nil || out != "A dot." {
			t.Fatalf("out %q, err %v", out, err)
		}
		if !bytes.Contains(s.Requests()[0].Raw, []byte(base64.StdEncoding.EncodeToString(png))) {
			t.Error("the image did not reach the model")
		}
	}},
	{"ImageFromTool", func(t *testing.T, p aProvider) {
		png, err := os.ReadFile("testdata/dot.png")
		if err != nil {
			t.Fatal(err)
		}
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("snapshot", `{}`)), oniontest.Text("A dot."))
		res, err := suiteAgent(t, p, s, Snapshot).Run(context.Background(), "Show me the dashboard")
		if err != nil || res.Output != "A dot." {
			t.Fatalf("res %+v, err %v", res, err)
		}
		if !bytes.Contains(s.Requests()[1].Raw, []byte(base64.StdEncoding.EncodeToString(png))) {
			t.Error("the tool's image did not reach the model")
		}
	}},
	{"CutReply", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.Text("The forecast for Oslo is").Truncated())
		res, err := suiteAgent(t, p, s, CityRain).Run(context.Background(), "Oslo?")
		if err != nil || res.StopReason != onion.StopLength || res.Output != "The forecast for Oslo is" {
			t.Fatalf("res %+v, err %v: want a length stop with the text as it came", res, err)
		}
	}},
	{"CutToolCalls", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("city_rain", `{"city":"Oslo"}`)).Truncated(), oniontest.Text("Ask again, please."))
		res, err := suiteAgent(t, p, s, CityRain).Run(context.Background(), "Oslo?")
		if err != nil || len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Skipped || res.Output != "Ask again, please." {
			t.Fatalf("res %+v, err %v: want the cut call skipped, never run", res, err)
		}
	}},
	{"ReasoningCarriedByteForByte", func(t *testing.T, p aProvider) {
		if p.reasoning == nil {
			t.Skipf("%s: Chat Completions sends no reasoning back; the Responses API's encrypted reasoning items, which oniontest does not make, are replayed from recordings in package openai's items tests", p.name)
		}
		s := oniontest.NewServer(t, p.reasoning(oniontest.ToolCalls(oniontest.Call("city_rain", `{"city":"Oslo"}`))), oniontest.Text("Rain."))
		conv := suiteAgent(t, p, s, CityRain, onion.KeepToolHistory()).NewConversation()
		if _, err := conv.Run(context.Background(), "Oslo?"); err != nil {
			t.Fatal(err)
		}
		var items []json.RawMessage
		for _, m := range conv.History() {
			if m.Role == onion.RoleAssistant && len(m.Items) > 0 {
				if err := json.Unmarshal(m.Items, &items); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		if len(items) == 0 {
			t.Fatal("the reply's reasoning was not kept in its Items")
		}
		second := s.Requests()[1].Raw
		for _, it := range items {
			var compact bytes.Buffer
			if err := json.Compact(&compact, it); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(second, compact.Bytes()) {
				t.Errorf("the next request does not carry %s as it came", compact.Bytes())
			}
		}
	}},
	{"UsageWithCachedTokens", func(t *testing.T, p aProvider) {
		if p.cached == nil {
			t.Skipf("oniontest reports no cached tokens on %s: its recorded exchanges show them (openai's TestCachedTokensReported)", p.name)
		}
		s := oniontest.NewServer(t, p.cached(oniontest.ToolCalls(oniontest.Call("city_report", `{"city":"Oslo"}`))), p.cached(oniontest.Text("Rain.")))
		long := strings.Repeat("Answer from the reports alone. ", 300) // a prefix worth caching
		res, err := suiteAgent(t, p, s, CityReport, onion.SystemPrompt(long)).Run(context.Background(), "Oslo?")
		if err != nil {
			t.Fatal(err)
		}
		if res.Usage.CachedTokens == 0 || res.Usage.CachedTokens > res.Usage.PromptTokens {
			t.Errorf("usage %+v: want cached tokens among the prompt tokens", res.Usage)
		}
	}},
	{"RefusedReply", func(t *testing.T, p aProvider) {
		for _, stream := range []bool{false, true} {
			var ran bool
			write := func(ctx context.Context, entry string) (string, error) { ran = true; return "ok", nil }
			s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("write", `{"entry":"x"}`)).Refused())
			tool, err := onion.NewTool(write, onion.Name("write"), onion.Description("Writes an entry."), onion.ParamNames("entry"))
			if err != nil {
				t.Fatal(err)
			}
			a := suiteAgent(t, p, s, tool)
			var res *onion.Result
			if stream {
				for ev, e := range a.Stream(context.Background(), "go") {
					if ev.Kind == onion.EventDone {
						res = ev.Result
					}
					err = e
				}
			} else {
				res, err = a.Run(context.Background(), "go")
			}
			if !errors.Is(err, onion.ErrRefused) || res == nil || res.StopReason != onion.StopRefused || ran || len(s.Requests()) != 1 {
				t.Fatalf("stream %v: result %+v, err %v, ran %v, %d requests", stream, res, err, ran, len(s.Requests()))
			}
		}
	}},
	{"FailedCallMarked", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("city_rain", `{"city":"Oslo"}`), oniontest.Call("city_alerts", `{"city":"Oslo"}`)), oniontest.Text("Rain; no alerts known."))
		res, err := suiteAgent(t, p, s, CityRain, CityAlerts).Run(context.Background(), "Oslo?")
		if err != nil || len(res.ToolCalls) != 2 || res.ToolCalls[1].Outcome != onion.Failed {
			t.Fatalf("res %+v, err %v", res, err)
		}
		req := s.Requests()[1]
		if !bytes.Contains(req.Raw, []byte("the alerts service has no data for Oslo")) {
			t.Errorf("the failure's words did not reach the model")
		}
		// Where the wire can say a call failed, it says so of that call alone.
		failed := map[string]bool{}
		switch {
		case req.Anthropic != nil:
			for _, m := range req.Anthropic.Messages {
				for _, b := range m.Content {
					if b.Type == "tool_result" {
						failed[b.Text] = b.IsError
					}
				}
			}
		case req.Gemini != nil:
			for _, c := range req.Gemini.Contents {
				for _, part := range c.Parts {
					if fr := part.FunctionResponse; fr != nil {
						var r map[string]string
						_ = json.Unmarshal(fr.Response, &r)
						_, isErr := r["error"]
						failed[r["output"]+r["error"]] = isErr
					}
				}
			}
		default:
			return // Chat Completions and the Responses API have no such mark
		}
		if len(failed) != 2 || failed["rain in Oslo"] {
			t.Errorf("the results as marked failed: %v; want the rain's unmarked", failed)
		}
		for text, isErr := range failed {
			if strings.Contains(text, "alerts service") && !isErr {
				t.Errorf("the failed call's result %q went unmarked", text)
			}
		}
	}},
	{"RetriedOverload", func(t *testing.T, p aProvider) {
		s := oniontest.NewServer(t, oniontest.RateLimited(time.Millisecond), oniontest.Text("Hello."))
		res, err := suiteAgent(t, p, s).Run(context.Background(), "hi")
		if err != nil || res.Output != "Hello." || len(s.Requests()) != 2 {
			t.Fatalf("res %+v, err %v, %d requests", res, err, len(s.Requests()))
		}
	}},
}

// TestConformance runs every case against every provider.
func TestConformance(t *testing.T) {
	for _, p := range suiteProviders {
		for _, c := range conformanceCases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) { c.run(t, p) })
		}
	}
}
