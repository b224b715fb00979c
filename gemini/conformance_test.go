package gemini_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// This file runs onion's conformance cases against the Gemini wire of
// oniontest, through onion's public API: each case is a func of a
// provider, so that the same table can run against every provider. The
// provider gives what differs: how to open its model on a server, and
// how to read its wire.

// provider is what a conformance case needs of a provider.
type provider struct {
	name string
	// open returns a model of the provider on s.
	open func(t *testing.T, s *oniontest.Server, model string, opts ...gemini.Option) onion.LanguageModel
	// newer and older are a model that takes everything the provider
	// has, and one of an earlier generation.
	newer, older string
}

var geminiProvider = provider{
	name: "gemini",
	open: func(t *testing.T, s *oniontest.Server, model string, opts ...gemini.Option) onion.LanguageModel {
		t.Helper()
		m, err := gemini.New(model, append([]gemini.Option{gemini.BaseURL(s.GeminiURL()), gemini.APIKey(testKey)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return m
	},
	newer: "gemini-3-flash-preview",
	older: "gemini-2.5-flash",
}

// testKey is the API key the tests send: it must reach no error.
const testKey = "AIzaSy-test-key-0123456789abcdef"

var conformance = []struct {
	name string
	run  func(t *testing.T, p provider)
}{
	{"PlainAnswer", plainAnswer},
	{"OneTool", oneTool},
	{"ParallelTools", parallelTools},
	{"StreamingTextAndToolCalls", streaming},
	{"ReasoningCarriedByteForByte", reasoningCarried},
	{"UsageWithCachedTokens", cachedUsage},
	{"Ask", askTyped},
	{"AskWithToolsOnAnOlderModel", askOlder},
	{"TokenBudgetStop", budgetStop},
	{"CompactAfter", compaction},
	{"ImageInPrompt", imageInPrompt},
	{"ImageFromTool", imageFromTool},
	{"CutReply", cutReply},
	{"RetriedOverload", retriedOverload},
	{"SchemaKeywordRefused", schemaRefused},
	{"ModelByName", modelByName},
	{"BytesStablePrefix", stablePrefix},
}

func TestConformance(t *testing.T) {
	for _, p := range []provider{geminiProvider} {
		for _, c := range conformance {
			t.Run(p.name+"/"+c.name, func(t *testing.T) { c.run(t, p) })
		}
	}
}

// Weather says the weather in a city.
func Weather(city string) string { return "sunny in " + city }

func agent(t *testing.T, m onion.LanguageModel, items ...any) *onion.Agent {
	t.Helper()
	a, err := onion.NewAgent("test", append([]any{onion.WithModel(m), onion.RetryBackoff(time.Millisecond, 10*time.Millisecond)}, items...)...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// body is a request's body, decoded for the assertions.
type body struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"systemInstruction"`
	GenerationConfig map[string]json.RawMessage `json:"generationConfig"`
	Tools            json.RawMessage            `json:"tools"`
}

func decode(t *testing.T, r oniontest.Request) body {
	t.Helper()
	var b body
	if err := json.Unmarshal(r.Raw, &b); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return b
}

func plainAnswer(t *testing.T, p provider) {
	s := oniontest.NewServer(t, oniontest.Text("Hello! How can I help?").WithUsage(12, 7))
	a := agent(t, p.open(t, s, p.older), onion.SystemPrompt("Be brief."), onion.Temperature(0.25))
	res, err := a.Run(context.Background(), "Hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "Hello! How can I help?" || res.StopReason != onion.StopNatural {
		t.Errorf("result %q, %s", res.Output, res.StopReason)
	}
	if want := (onion.Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19, Requests: 1}); res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	r := s.Requests()[0]
	if r.Gemini == nil || r.Gemini.Model != p.older || r.Stream {
		t.Fatalf("request %+v: want a generateContent request for %s", r.Gemini, p.older)
	}
	if got := r.Header.Get("X-Goog-Api-Key"); got != testKey {
		t.Errorf("key header %q", got)
	}
	b := decode(t, r)
	if b.SystemInstruction == nil || !strings.Contains(b.SystemInstruction.Parts[0].Text, "Be brief.") {
		t.Errorf("system instruction %+v", b.SystemInstruction)
	}
	if len(b.Contents) != 1 || b.Contents[0].Role != "user" || string(b.Contents[0].Parts[0]) != `{"text":"Hi"}` {
		t.Errorf("contents %s", r.Raw)
	}
	if string(b.GenerationConfig["temperature"]) != "0.25" {
		t.Errorf("generation config %s", r.Raw)
	}
}

func oneTool(t *testing.T, p provider) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	a := agent(t, p.open(t, s, p.older), Weather)
	res, err := a.Run(context.Background(), "Weather in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "It is sunny in Paris." || len(res.ToolCalls) != 1 || res.ToolCalls[0].Output != "sunny in Paris" ||
		res.ToolCalls[0].Arguments != `{"city":"Paris"}` {
		t.Fatalf("result %+v", res)
	}
	reqs := s.Requests()
	var decl struct {
		FunctionDeclarations []struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	}
	var tools []json.RawMessage
	_ = json.Unmarshal(decode(t, reqs[0]).Tools, &tools)
	if len(tools) != 1 || json.Unmarshal(tools[0], &decl) != nil || len(decl.FunctionDeclarations) != 1 ||
		decl.FunctionDeclarations[0].Name != "weather" || !strings.Contains(string(decl.FunctionDeclarations[0].Parameters), `"city"`) {
		t.Errorf("tools %s", decode(t, reqs[0]).Tools)
	}
	// The call came without an ID, as Gemini 2.5 sends them: the
	// response answers it by name, and the model's content goes back as
	// it came, its thought signature with it.
	c := reqs[1].Gemini.Contents
	if len(c) != 3 || c[1].Role != "model" || c[1].Parts[0].FunctionCall == nil || c[1].Parts[0].ThoughtSignature == "" {
		t.Fatalf("contents %s", reqs[1].Raw)
	}
	fr := c[2].Parts[0].FunctionResponse
	if c[2].Role != "user" || fr == nil || fr.Name != "weather" || fr.ID != c[1].Parts[0].FunctionCall.ID || string(fr.Response) != `{"output":"sunny in Paris"}` {
		t.Errorf("function response %s", reqs[1].Raw)
	}
}

// Slow and Fast are tools whose calls end in the other order than they
// were asked for: Slow waits for Fast.
type racers struct{ fastDone chan struct{} }

// Slow answers once Fast has.
//
//onion:intent read
func (r *racers) Slow(ctx context.Context, n int) (string, error) {
	select {
	case <-r.fastDone:
		return fmt.Sprint("slow ", n), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Fast answers at once.
//
//onion:intent read
func (r *racers) Fast(n int) string {
	close(r.fastDone)
	return fmt.Sprint("fast ", n)
}

func parallelTools(t *testing.T, p provider) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.ToolCall{ID: "pkjly1p7", Name: "slow", Arguments: `{"n":1}`},
			oniontest.ToolCall{ID: "bnxwmmb1", Name: "fast", Arguments: `{"n":2}`}),
		oniontest.Text("done"),
	)
	r := &racers{fastDone: make(chan struct{})}
	a := agent(t, p.open(t, s, p.newer), r, onion.MaxParallel(2))
	res, err := a.Run(context.Background(), "race")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done" || len(res.ToolCalls) != 2 {
		t.Fatalf("result %+v", res)
	}
	c := s.Requests()[1].Gemini.Contents
	if len(c) != 3 || len(c[1].Parts) != 2 || len(c[2].Parts) != 2 {
		t.Fatalf("contents %s", s.Requests()[1].Raw)
	}
	// One user content answers both, in the order of the calls, each by
	// its call's ID, though fast ended first.
	for i, want := range []struct{ id, name, output string }{{"pkjly1p7", "slow", "slow 1"}, {"bnxwmmb1", "fast", "fast 2"}} {
		fr := c[2].Parts[i].FunctionResponse
		if fr == nil || fr.ID != want.id || fr.Name != want.name || string(fr.Response) != fmt.Sprintf(`{"output":%q}`, want.output) {
			t.Errorf("response %d: %s", i, c[2].Parts[i].Raw)
		}
	}
}

func streaming(t *testing.T, p provider) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`), oniontest.Call("weather", `{"city":"Rome"}`)),
		oniontest.Text("Sunny in Paris and in Rome."),
	)
	a := agent(t, p.open(t, s, p.newer), Weather)
	var deltas []string
	var started []string
	var res *onion.Result
	for e, err := range a.Stream(context.Background(), "Paris and Rome?") {
		if err != nil {
			t.Fatal(err)
		}
		switch e.Kind {
		case onion.EventTextDelta:
			deltas = append(deltas, e.Text)
		case onion.EventToolStarted:
			started = append(started, e.Call.Arguments)
		case onion.EventDone:
			res = e.Result
		}
	}
	if !slices.Equal(deltas, []string{"Sunny", " in", " Paris", " and", " in", " Rome."}) {
		t.Errorf("deltas %q", deltas)
	}
	if len(started) != 2 || res == nil || res.Output != "Sunny in Paris and in Rome." {
		t.Errorf("calls %q, result %+v", started, res)
	}
	for _, r := range s.Requests() {
		if !r.Stream || !r.Gemini.Stream {
			t.Errorf("a request not streamed: %+v", r.Gemini)
		}
	}
	if fr := s.Requests()[1].Gemini.Contents[2].Parts; len(fr) != 2 || fr[1].FunctionResponse == nil || string(fr[1].FunctionResponse.Response) != `{"output":"sunny in Rome"}` {
		t.Errorf("responses %s", s.Requests()[1].Raw)
	}
}

// reasoningCarried: the thought signature, and the thought the model
// showed, go back in the next request exactly as they came, streamed or
// not, from oniontest and from a reply recorded from the API.
func reasoningCarried(t *testing.T, p provider) {
	// A signature of the real API (gemini/testdata/recorded), with its
	// "+" and "/" and padding.
	const real = "Et8ECtwEAXLI2nyCB1jKZUE4ZxdH07XhZlpU7X7tlcbNO8oQurN910Rmh6fTq1azIzM7kzq/xMB7GilOxBK6VMDoMgkGuIHttwPgPiwD2jO3a3ra4gFE+zxUPPx9R9bsRWd5641CymAZnsFeXVvrwYeeymh7gxR0a8F0pYkxwvuMDgGJwopaCXSuP8+6d8OgA+uoGTyyzr6f9Qi2N0sZwDcURV1S+8QSYsz8Ilijh/lfKAoEJ7g8qWJil47hvc/4QnVueKCcIsFCb2mto2w+awtagbg3DXF52epHnQyCe7RaKAHyvRqZ7NOSi9Aya4LkGnf7uoeG/yLPwZMPSet3xzygCMuyU+P7sG7T7g7KfQtlHPTpSAuJZIexbYi91N+RJJAhSNMX5tt1zlDRHAWcZ/8e0zBbg1CiWJ3dI8YsVGRXdDIh5KUx1b7SVNwVIqj6oeISXLBHJKZHXXrnhceKcIKbVZ1UscQTKZGOFnIzilGl/5H64Cjp3/IK1kpsypchhXVR478xb3jlbsgtUaSC1bifszV7kD5XROIYHE3nrt/hI75yABz/naoNxuJIHV6ZUqC1d6T8mB3U8DfhS65PF0JVjcOv7j+PifCb6nSMb/eaJAYKTOx37cfZTcmQIoFDofypBC6UVGt/GbCr76mpFqjENZ5QTN5nfbH/rfuM00/mBQPbuRdcmEgujEIo/BelxPEVOC6tszKkQlEoJfO7qazAvRvksWHQHNQtUFO6n1HmRaK1sq6Ana1c5vSj8Mv7uDLmJNTV8/iGNlLqwj6FjB4rbYIju0HegvoS6z1/ufbMdg=="
	recorded := `{"candidates": [{"content": {"parts": [{"text": "I will look.", "thought": true}, {"functionCall": {"name": "weather","args": {"city": "Oslo"}},"thoughtSignature": "` + real + `"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 29,"candidatesTokenCount": 10,"totalTokenCount": 149,"thoughtsTokenCount": 110},"modelVersion": "gemini-3-pro-preview","responseId": "SVV8aY6uBqe6qtsPmJbEuAM"}`
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			replay := oniontest.Replay("application/json", []byte(recorded))
			if stream {
				replay = oniontest.Replay("text/event-stream", []byte("data: "+recorded+"\r\n\r\n"))
			}
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
				replay,
				oniontest.Text("Sunny in both."),
			)
			a := agent(t, p.open(t, s, p.newer, gemini.IncludeThoughts()), Weather)
			var reasoning strings.Builder
			run := func() (*onion.Result, error) {
				if !stream {
					return a.Run(context.Background(), "Paris, then Oslo?")
				}
				var res *onion.Result
				for e, err := range a.Stream(context.Background(), "Paris, then Oslo?") {
					if err != nil {
						return nil, err
					}
					if e.Kind == onion.EventDone {
						res = e.Result
					}
				}
				return res, nil
			}
			res, err := run()
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != "Sunny in both." || len(res.ToolCalls) != 2 {
				t.Fatalf("result %+v", res)
			}
			_ = reasoning
			reqs := s.Requests()
			first := reqs[1].Gemini.Contents[1]
			if len(first.Parts) != 2 || !first.Parts[0].Thought || first.Parts[0].Text == "" ||
				first.Parts[1].ThoughtSignature != base64.StdEncoding.EncodeToString([]byte("oniontest thought signature #1")) {
				t.Errorf("the first model content sent back: %s", reqs[1].Raw)
			}
			second := reqs[2].Gemini.Contents[3]
			if len(second.Parts) != 2 || second.Parts[0].Text != "I will look." || !second.Parts[0].Thought ||
				second.Parts[1].ThoughtSignature != real || !bytes.Contains(reqs[2].Raw, []byte(`"thoughtSignature":"`+real+`"`)) {
				t.Errorf("the recorded model content sent back: %s", reqs[2].Raw)
			}
			// Earlier turns go again byte for byte.
			if !bytes.Equal(first.Parts[1].Raw, reqs[2].Gemini.Contents[1].Parts[1].Raw) {
				t.Errorf("the first turn changed between requests")
			}
		})
	}
}

func cachedUsage(t *testing.T, p provider) {
	// oniontest's Gemini wire serves from its implicit cache a shared
	// prefix of 1,024 tokens and more, as the API does.
	long := strings.Repeat("Answer with care, and name your sources. ", 150)
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)).WithUsage(2000, 20),
		oniontest.Text("Sunny.").WithUsage(2100, 5),
	)
	a := agent(t, p.open(t, s, p.older), Weather, onion.SystemPrompt(long))
	res, err := a.Run(context.Background(), "Weather in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.CachedTokens < 1500 || res.Usage.CachedTokens > 2000 || res.Usage.PromptTokens != 4100 {
		t.Errorf("usage %+v: want the second request's prefix served from the cache", res.Usage)
	}
}

// Forecast is the weather expected in a city.
type Forecast struct {
	City  string `json:"city"`
	TempC int    `json:"temp_c" jsonschema:"minimum=-90,maximum=60"`
	// Sky is one of sunny, cloudy, rainy.
	Sky string `json:"sky" jsonschema:"enum=sunny,enum=cloudy,enum=rainy"`
}

func askTyped(t *testing.T, p provider) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text(`{"city":"Paris","temp_c":21,"sky":"sunny"}`),
	)
	a := agent(t, p.open(t, s, p.newer), Weather)
	f, res, err := onion.Ask[Forecast](context.Background(), a, "Weather in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	if f != (Forecast{City: "Paris", TempC: 21, Sky: "sunny"}) || res.StopReason != onion.StopNatural {
		t.Errorf("answer %+v, %s", f, res.StopReason)
	}
	for i, r := range s.Requests() {
		g := decode(t, r).GenerationConfig
		var schema struct {
			Properties       map[string]json.RawMessage `json:"properties"`
			PropertyOrdering []string                   `json:"propertyOrdering"`
		}
		if string(g["responseMimeType"]) != `"application/json"` || json.Unmarshal(g["responseJsonSchema"], &schema) != nil ||
			!slices.Equal(schema.PropertyOrdering, []string{"city", "temp_c", "sky"}) || len(schema.Properties) != 3 {
			t.Errorf("request %d asks for %s", i, r.Raw)
		}
	}
}

func askOlder(t *testing.T, p provider) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text(`{"city":"Paris","temp_c":21,"sky":"sunny"}`),
	)
	a := agent(t, p.open(t, s, p.older), Weather)
	f, _, err := onion.Ask[Forecast](context.Background(), a, "Weather in Paris?")
	if err != nil || f.City != "Paris" {
		t.Fatalf("answer %+v, %v", f, err)
	}
	// Before Gemini 3 a request with functions cannot ask for JSON: the
	// schema is in the system instruction, the same in each request.
	var system []string
	for i, r := range s.Requests() {
		b := decode(t, r)
		if _, asked := b.GenerationConfig["responseMimeType"]; asked {
			t.Errorf("request %d with tools asks for JSON: %s", i, r.Raw)
		}
		last := b.SystemInstruction.Parts[len(b.SystemInstruction.Parts)-1].Text
		if !strings.Contains(last, `"temp_c"`) {
			t.Errorf("request %d: system %q", i, last)
		}
		system = append(system, last)
	}
	if system[0] != system[1] {
		t.Errorf("the system instruction changed between requests")
	}
}

// Lookup looks a key up.
func Lookup(key string) string { return "value of " + key }

func budgetStop(t *testing.T, p provider) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)).WithUsage(300, 40),
		oniontest.Text("from what I have").WithUsage(400, 10),
	)
	a := agent(t, p.open(t, s, p.older), Lookup, onion.TokenBudget(1000))
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != onion.StopBudget || res.Output != "from what I have" || len(s.Requests()) != 2 {
		t.Fatalf("stop %s, output %q, %d requests", res.StopReason, res.Output, len(s.Requests()))
	}
	last := s.Requests()[1]
	if last.Gemini.Tools != nil {
		t.Errorf("the final request offers tools: %s", last.Raw)
	}
	fr := last.Gemini.Contents[2].Parts[0].FunctionResponse
	if fr == nil || !strings.Contains(string(fr.Response), "Token budget: 660 of 1000 tokens left.") {
		t.Errorf("the budget line: %s", last.Raw)
	}
}

// Fetch returns the page at url.
func Fetch(url string) string { return strings.Repeat("lorem ipsum ", 1000) }

func compaction(t *testing.T, p provider) {
	var mu sync.Mutex
	calls := 0
	s := oniontest.NewServer(t)
	step := oniontest.Func(func(r oniontest.Request) oniontest.Step {
		mu.Lock()
		defer mu.Unlock()
		if m := r.Body.Messages; len(m) > 0 && m[0].Content == loop.SummaryPrompt {
			return oniontest.Text("the pages said lorem ipsum")
		}
		if calls < 3 {
			calls++
			return oniontest.ToolCalls(oniontest.Call("fetch", fmt.Sprintf(`{"url":"https://example.com/%d"}`, calls)))
		}
		return oniontest.Text("done")
	})
	for range 6 {
		s.Add(step)
	}
	a := agent(t, p.open(t, s, p.newer, gemini.IncludeThoughts()), Fetch, onion.CompactAfter(5000))
	res, err := a.Run(context.Background(), "read the pages")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done" || len(res.Compactions) == 0 {
		t.Fatalf("result %q, compactions %+v", res.Output, res.Compactions)
	}
	// Every request after the compaction is one the API takes: the
	// server checks the calls of the current turn keep their thought
	// signatures and every call has its response.
	if res.Usage.Requests != len(s.Requests()) {
		t.Errorf("usage counts %d requests, the server got %d", res.Usage.Requests, len(s.Requests()))
	}
}
