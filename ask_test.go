package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// Forecast is the weather expected in a city.
type Forecast struct {
	// City is the city the forecast is for.
	City  string `json:"city"`
	TempC int    `json:"temp_c" jsonschema:"minimum=-90,maximum=60"`
	Sky   Sky    `json:"sky"`
	// Note is anything worth adding.
	Note *string `json:"note,omitempty"`
}

// Sky is what the sky looks like.
type Sky string

// The skies a forecast may have.
const (
	Sunny  Sky = "sunny"
	Cloudy Sky = "cloudy"
	Rainy  Sky = "rainy"
)

// wires are the two wires of the built-in client, for tests that touch
// what travels on them.
var wires = []struct {
	name string
	opts []any
}{{"chat", nil}, {"responses", []any{onion.ResponsesAPI()}}}

// sentFormat is the structured output a request asked for, read from the
// body as sent: response_format on Chat Completions, text.format on the
// Responses API, in the shape both share.
type sentFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name"`
	Desc   string          `json:"description"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

func formatOf(t *testing.T, r oniontest.Request) (sentFormat, bool) {
	t.Helper()
	var body struct {
		ResponseFormat *struct {
			Type       string      `json:"type"`
			JSONSchema *sentFormat `json:"json_schema"`
		} `json:"response_format"`
		Text *struct {
			Format *sentFormat `json:"format"`
		} `json:"text"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	switch {
	case r.Responses == nil && body.ResponseFormat != nil && body.ResponseFormat.JSONSchema != nil:
		f := *body.ResponseFormat.JSONSchema
		f.Type = body.ResponseFormat.Type
		return f, true
	case r.Responses != nil && body.Text != nil && body.Text.Format != nil:
		return *body.Text.Format, true
	}
	return sentFormat{}, false
}

// strictSchemaOf is the strict parameters schema of a tool whose struct
// argument is v's type: what an answer of that type must be held to.
func strictSchemaOf[T any](t *testing.T) string {
	t.Helper()
	tool, err := onion.NewTool(func(ctx context.Context, arg T) error { return nil }, onion.Name("f"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := onion.NewAgent("schema", tool, onion.Strict())
	if err != nil {
		t.Fatal(err)
	}
	return string(a.Definitions()[0].Function.Parameters.(json.RawMessage))
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// lastUser is the text of the last user message of request n.
func lastUser(s *oniontest.Server, n int) string {
	msgs := s.Requests()[n].Body.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

func TestAskStruct(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text(`{"city":"Paris","temp_c":21,"sky":"sunny","note":null}`))
			f, res, err := onion.Ask[Forecast](context.Background(), newAgent(t, s, w.opts...), "Weather in Paris?")
			if err != nil {
				t.Fatal(err)
			}
			if f.City != "Paris" || f.TempC != 21 || f.Sky != Sunny || f.Note != nil {
				t.Errorf("answer = %+v", f)
			}
			if res.StopReason != onion.StopNatural || res.Output == "" {
				t.Errorf("result %+v", res)
			}
			sent, ok := formatOf(t, s.Requests()[0])
			if !ok {
				t.Fatalf("the request asked for no structured output: %s", s.Requests()[0].Raw)
			}
			if sent.Type != "json_schema" || sent.Name != "forecast" || !sent.Strict || sent.Desc != "Forecast is the weather expected in a city." {
				t.Errorf("format %+v", sent)
			}
			// Derived exactly as a struct argument's strict schema is.
			if got, want := compact(t, sent.Schema), compact(t, []byte(strictSchemaOf[Forecast](t))); got != want {
				t.Errorf("schema\n got %s\nwant %s", got, want)
			}
			for _, want := range []string{`"enum":["sunny","cloudy","rainy"]`, `"additionalProperties":false`, `"City is the city the forecast is for."`, `"maximum":60`} {
				if !strings.Contains(string(sent.Schema), want) {
					t.Errorf("schema %s lacks %s", sent.Schema, want)
				}
			}
		})
	}
}

func TestAskPointerToStruct(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text(`{"city":"Oslo","temp_c":-3,"sky":"cloudy","note":"windy"}`))
	f, _, err := onion.Ask[*Forecast](context.Background(), newAgent(t, s), "Weather in Oslo?")
	if err != nil || f == nil || f.City != "Oslo" || f.Note == nil || *f.Note != "windy" {
		t.Fatalf("answer %+v, err %v", f, err)
	}
	if sent, _ := formatOf(t, s.Requests()[0]); sent.Name != "forecast" {
		t.Errorf("format name %q, want the struct's", sent.Name)
	}
}

func TestAskEnum(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text(`{"answer":"rainy"}`))
			sky, res, err := onion.Ask[Sky](context.Background(), newAgent(t, s, w.opts...), "Will it rain?")
			if err != nil || sky != Rainy {
				t.Fatalf("answer %q, err %v", sky, err)
			}
			if res.Output != `{"answer":"rainy"}` {
				t.Errorf("output %q: the raw answer, wrapped as the model sent it", res.Output)
			}
			sent, ok := formatOf(t, s.Requests()[0])
			want := `{"additionalProperties":false,"properties":{"answer":{"enum":["sunny","cloudy","rainy"],"type":"string"}},"required":["answer"],"type":"object"}`
			if !ok || !sent.Strict || sent.Name != "sky" || sent.Desc != "Sky is what the sky looks like." || compact(t, sent.Schema) != want {
				t.Errorf("format %s %q %q %v\nschema %s\n  want %s", sent.Type, sent.Name, sent.Desc, sent.Strict, sent.Schema, want)
			}
		})
	}
}

func TestAskSlice(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("```json\n{\"answer\":[\"a\",\"b\"]}\n```"))
	got, _, err := onion.Ask[[]string](context.Background(), newAgent(t, s), "Two letters")
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("answer %q, err %v (a fenced answer is read too)", got, err)
	}
	if sent, _ := formatOf(t, s.Requests()[0]); sent.Name != "answer" {
		t.Errorf("format name %q, want answer for an unnamed type", sent.Name)
	}
}

func TestAskCorrectiveTurn(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.Text(`{"city":"Paris","temp_c":"warm","sky":"foggy"}`),
				oniontest.Text(`{"city":"Paris","temp_c":18,"sky":"cloudy"}`),
			)
			f, res, err := onion.Ask[Forecast](context.Background(), newAgent(t, s, w.opts...), "Weather in Paris?")
			if err != nil || f.TempC != 18 || f.Sky != Cloudy {
				t.Fatalf("answer %+v, err %v", f, err)
			}
			if n := len(s.Requests()); n != 2 || res.StopReason != onion.StopNatural {
				t.Fatalf("%d requests, stop %s", n, res.StopReason)
			}
			fix := lastUser(s, 1)
			for _, want := range []string{"does not fit", "temp_c", "warm", "sky", "foggy"} {
				if !strings.Contains(fix, want) {
					t.Errorf("corrective turn %q does not name %q", fix, want)
				}
			}
			if _, ok := formatOf(t, s.Requests()[1]); !ok {
				t.Error("the corrective request asked for no structured output")
			}
			msgs := s.Requests()[1].Body.Messages
			if len(msgs) < 2 || msgs[len(msgs)-2].Content != `{"city":"Paris","temp_c":"warm","sky":"foggy"}` {
				t.Errorf("the corrective request does not carry the rejected answer: %+v", msgs)
			}
		})
	}
}

func TestAskAnswerNeverFits(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.Text(`{"city":"Paris"}`),
				oniontest.Text(`It is sunny.`),
			)
			f, res, err := onion.Ask[Forecast](context.Background(), newAgent(t, s, w.opts...), "Weather in Paris?")
			var ae *onion.AnswerError
			if !errors.As(err, &ae) || !errors.Is(err, onion.ErrInvalidAnswer) {
				t.Fatalf("err = %v, want an *AnswerError", err)
			}
			if ae.Raw != "It is sunny." || ae.Type != "onion_test.Forecast" || len(ae.Problems) == 0 || !strings.Contains(err.Error(), ae.Problems[0]) {
				t.Errorf("error %+v", ae)
			}
			// The answer is not JSON: the error says so of the answer, not
			// of "arguments".
			if !strings.Contains(err.Error(), "the answer is not valid JSON") || strings.Contains(err.Error(), "arguments") {
				t.Errorf("error %q, want it to say the answer is not valid JSON", err)
			}
			if f != (Forecast{}) || res == nil || res.Output != "It is sunny." {
				t.Errorf("answer %+v, result %+v", f, res)
			}
			if n := len(s.Requests()); n != 2 {
				t.Errorf("%d requests, want the answer and one corrective turn", n)
			}
			if fix := lastUser(s, 1); !strings.Contains(fix, "temp_c") || !strings.Contains(fix, "sky") {
				t.Errorf("corrective turn %q does not name every missing field", fix)
			}
		})
	}
}

func TestAskWithTools(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"paris"}`)),
				oniontest.Text(`{"city":"Paris","temp_c":12,"sky":"rainy"}`),
			)
			f, res, err := onion.Ask[Forecast](context.Background(), newAgent(t, s, append([]any{Lookup}, w.opts...)...), "Weather in Paris?")
			if err != nil || f.Sky != Rainy {
				t.Fatalf("answer %+v, err %v", f, err)
			}
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.Succeeded || res.Iterations != 1 {
				t.Errorf("tool calls %+v", res.ToolCalls)
			}
			for i, r := range s.Requests() {
				sent, ok := formatOf(t, r)
				if !ok || !sent.Strict || !strings.Contains(string(sent.Schema), `"temp_c"`) {
					t.Errorf("request %d: format %+v", i, sent)
				}
				if !strings.Contains(string(r.Raw), `"name":"lookup"`) {
					t.Errorf("request %d offers no tools: %s", i, r.Raw)
				}
			}
		})
	}
}

func TestAskAtTheCap(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)),
		oniontest.Text(`{"answer":"sunny"}`),
	)
	sky, res, err := onion.Ask[Sky](context.Background(), newAgent(t, s, Lookup, onion.MaxIterations(1)), "go")
	if err != nil || sky != Sunny || res.StopReason != onion.StopMaxIterations {
		t.Fatalf("answer %q, stop %s, err %v", sky, res.StopReason, err)
	}
	last := s.Requests()[1]
	if _, ok := formatOf(t, last); !ok || strings.Contains(string(last.Raw), `"tools"`) {
		t.Errorf("the request after the cap: %s; want no tools and the format", last.Raw)
	}
}

func TestAskStream(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`)),
				oniontest.Text(`{"city":"Rome", "temp_c":25, "sky":"sunny"}`),
			)
			var text strings.Builder
			var done *onion.Event
			for e, err := range onion.AskStream[Forecast](context.Background(), newAgent(t, s, append([]any{Lookup}, w.opts...)...), "Rome?") {
				if err != nil {
					t.Fatal(err)
				}
				switch e.Kind {
				case onion.EventTextDelta:
					text.WriteString(e.Text)
				case onion.EventDone:
					done = &e
				}
			}
			if done == nil || done.Result == nil {
				t.Fatal("no EventDone")
			}
			f, ok := done.Answer.(Forecast)
			if !ok || f.City != "Rome" || f.Sky != Sunny {
				t.Errorf("answer %#v", done.Answer)
			}
			if text.String() != done.Result.Output {
				t.Errorf("streamed %q, output %q", text.String(), done.Result.Output)
			}
			if !s.Requests()[1].Stream {
				t.Error("not streamed")
			}
		})
	}
}

func TestAskStreamAnswerError(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text(`{}`), oniontest.Text(`{}`))
	var last error
	var answer any = "unset"
	for e, err := range onion.AskStream[Forecast](context.Background(), newAgent(t, s), "go") {
		if e.Kind == onion.EventDone {
			last, answer = err, e.Answer
		}
	}
	var ae *onion.AnswerError
	if !errors.As(last, &ae) || ae.Raw != "{}" || answer != nil {
		t.Errorf("err %v, answer %v", last, answer)
	}
}

func TestAskRefusesTypesStrictModeCannotExpress(t *testing.T) {
	s := oniontest.NewServer(t)
	_, res, err := onion.Ask[map[string]int](context.Background(), newAgent(t, s), "go")
	if err == nil || res != nil || !strings.Contains(err.Error(), "onion.Ask: answer type map[string]int") {
		t.Errorf("err = %v", err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestRunSendsNoFormat(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("hi"))
	if _, err := newAgent(t, s).Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if _, ok := formatOf(t, s.Requests()[0]); ok || strings.Contains(string(s.Requests()[0].Raw), "response_format") {
		t.Errorf("a plain run asked for structured output: %s", s.Requests()[0].Raw)
	}
}

func TestAskInConversation(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.Text(`{"answer":"sunny"}`),
		oniontest.Text(`{}`), oniontest.Text(`{}`),
	)
	c := newAgent(t, s).NewConversation()
	if sky, _, err := onion.AskIn[Sky](context.Background(), c, "today?"); err != nil || sky != Sunny {
		t.Fatalf("answer %q, err %v", sky, err)
	}
	if h := c.History(); len(h) != 2 || h[0].Content != "today?" || h[1].Content != `{"answer":"sunny"}` {
		t.Errorf("history %+v, want the turn added", h)
	}
	if _, _, err := onion.AskIn[Sky](context.Background(), c, "tomorrow?"); !errors.Is(err, onion.ErrInvalidAnswer) {
		t.Fatalf("err = %v", err)
	}
	if n := len(c.History()); n != 2 {
		t.Errorf("%d messages: an answer that does not fit adds no turn", n)
	}
	if msgs := s.Requests()[1].Body.Messages; len(msgs) != 4 || msgs[2].Content != `{"answer":"sunny"}` {
		t.Errorf("the second run's conversation: %+v", msgs)
	}
}
