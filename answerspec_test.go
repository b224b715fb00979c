package onion_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// Ticket is an answer with what strict mode cannot state (lengths) and
// what its strict form changes (optional fields).
type Ticket struct {
	Title    string        `json:"title" jsonschema:"minLength=3,maxLength=20"`
	Tags     []string      `json:"tags,omitempty" jsonschema:"maxItems=2"`
	Priority int8          `json:"priority"`
	Due      *time.Time    `json:"due,omitempty"`
	Wait     time.Duration `json:"wait,omitempty"`
	Owner    struct {
		Name  string `json:"name"`
		Email string `json:"email" jsonschema:"format=email"`
	} `json:"owner"`
}

// askProblems runs answer through a live Ask of T whose answer never
// changes: nil when it fits, else the problems of its *AnswerError.
func askProblems[T any](t *testing.T, answer string) []string {
	t.Helper()
	s := oniontest.NewServer(t, oniontest.Text(answer), oniontest.Text(answer))
	_, _, err := onion.Ask[T](context.Background(), newAgent(t, s), "answer")
	var ae *onion.AnswerError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae):
		return ae.Problems
	}
	t.Fatalf("ask %q: %v", answer, err)
	return nil
}

// specProblems checks answer with T's AnswerSpec after a trip through
// JSON, as a durable run's worker gets it.
func specProblems[T any](t *testing.T, answer string) []string {
	t.Helper()
	spec, err := onion.AnswerSpecOf[T]()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var got onion.AnswerSpec
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	problems, err := got.Problems(answer)
	if err != nil {
		t.Fatal(err)
	}
	return problems
}

// TestAnswerSpecProblemsMatchAsk: the schema-only check of a worker that
// does not know the type names, for every answer, exactly the problems
// the live Ask names (none when it fits).
func TestAnswerSpecProblemsMatchAsk(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200)
	owner := `"owner":{"name":"Ann","email":"ann@example.com"}`
	tickets := []string{
		`{"title":"Fix it","priority":1,` + owner + `}`,
		`{"title":"Fix it","priority":1,"tags":null,"due":null,"wait":null,` + owner + `}`,
		`{"title":"Fix it","priority":1,"tags":["a","b"],"due":"2026-12-01T10:00:00Z","wait":"90s",` + owner + `}`,
		"```json\n" + `{"title":"Fix it","priority":1,` + owner + `}` + "\n```",
		`{"title":"Fi","priority":1,` + owner + `}`,
		`{"title":"` + strings.Repeat("x", 21) + `","priority":1,` + owner + `}`,
		`{"title":"Fix it","priority":300,` + owner + `}`,
		`{"title":"Fix it","priority":1.5,` + owner + `}`,
		`{"title":"Fix it","priority":"high",` + owner + `}`,
		`{"title":"Fix it","priority":1,"tags":["a","b","c"],` + owner + `}`,
		`{"title":"Fix it","priority":1,"due":"tomorrow",` + owner + `}`,
		`{"title":"Fix it","priority":1,"wait":"soon",` + owner + `}`,
		`{"title":"Fix it","priority":1,"owner":{"name":"Ann","email":"not an email"}}`,
		`{"title":"Fix it","priority":1,"owner":{"name":"Ann"}}`,
		`{"title":null,"priority":1,` + owner + `}`,
		`{"title":"Fix it","priority":1,"color":"red",` + owner + `}`,
		`{"priority":1}`,
		`{}`,
		`[]`,
		`"Fix it"`,
		`It is fixed.`,
		`{"title":"Fix it",`,
		`{"title":"Fix it","priority":1,` + owner + `} and more`,
		``,
		"   \n",
		deep,
	}
	for _, answer := range tickets {
		live, spec := askProblems[Ticket](t, answer), specProblems[Ticket](t, answer)
		if !slices.Equal(live, spec) {
			t.Errorf("Ticket answer %.60q:\n live %q\n spec %q", answer, live, spec)
		}
	}
	for _, answer := range []string{`{"answer":"sunny"}`, `{"answer":"foggy"}`, `{"answer":null}`, `{"answer":3}`, `"sunny"`, `{}`, `{"answer":"rainy","x":1}`} {
		live, spec := askProblems[Sky](t, answer), specProblems[Sky](t, answer)
		if !slices.Equal(live, spec) {
			t.Errorf("Sky answer %q:\n live %q\n spec %q", answer, live, spec)
		}
	}
	for _, answer := range []string{`{"city":"Paris","temp_c":21,"sky":"sunny","note":null}`, `{"city":"Paris","temp_c":99,"sky":"sunny"}`, `{"city":"Paris"}`} {
		live, spec := askProblems[Forecast](t, answer), specProblems[Forecast](t, answer)
		if !slices.Equal(live, spec) {
			t.Errorf("Forecast answer %q:\n live %q\n spec %q", answer, live, spec)
		}
	}
}

func TestAnswerSpecOf(t *testing.T) {
	spec, err := onion.AnswerSpecOf[Forecast]()
	if err != nil {
		t.Fatal(err)
	}
	if f := spec.Format; f.Name != "forecast" || !f.Strict || f.Description != "Forecast is the weather expected in a city." {
		t.Errorf("format %+v", f)
	}
	// The Format is the strict schema Ask sends; Schema keeps note optional.
	if got, want := compact(t, spec.Format.Schema), compact(t, []byte(strictSchemaOf[Forecast](t))); got != want {
		t.Errorf("format schema\n got %s\nwant %s", got, want)
	}
	if strings.Contains(compact(t, spec.Schema), `"note"]`) {
		t.Errorf("the checked schema requires the optional note: %s", spec.Schema)
	}
	wrapped, err := onion.AnswerSpecOf[Sky]()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wrapped.Format.Schema), `"answer"`) || !strings.Contains(string(wrapped.Format.Schema), `"cloudy"`) {
		t.Errorf("enum format %s", wrapped.Format.Schema)
	}
	if _, err := onion.AnswerSpecOf[map[string]int](); err == nil {
		t.Error("a map answer, which strict mode cannot express, derived a spec")
	}
}

func TestAnswerSpecBadSchema(t *testing.T) {
	spec := &onion.AnswerSpec{Format: loop.Format{Name: "bad"}, Schema: json.RawMessage(`{"type":`)}
	if _, err := spec.Problems(`{}`); err == nil {
		t.Error("a schema that does not compile checked an answer")
	}
}

func TestDecodeAnswer(t *testing.T) {
	f, err := onion.DecodeAnswer[Forecast](`{"city":"Paris","temp_c":21,"sky":"sunny"}`)
	if err != nil || f.City != "Paris" || f.Sky != Sunny {
		t.Fatalf("forecast %+v, err %v", f, err)
	}
	sky, err := onion.DecodeAnswer[Sky](`{"answer":"rainy"}`)
	if err != nil || sky != Rainy {
		t.Fatalf("sky %q, err %v", sky, err)
	}
	p, err := onion.DecodeAnswer[*Forecast]("```json\n{\"city\":\"Oslo\",\"temp_c\":-3,\"sky\":\"cloudy\"}\n```")
	if err != nil || p == nil || p.City != "Oslo" {
		t.Fatalf("pointer %+v, err %v", p, err)
	}
	_, err = onion.DecodeAnswer[Forecast](`It is sunny.`)
	var ae *onion.AnswerError
	if !errors.As(err, &ae) || ae.Raw != "It is sunny." || ae.Type != "onion_test.Forecast" || len(ae.Problems) == 0 {
		t.Fatalf("err %v, want an *AnswerError", err)
	}
	if _, err := onion.DecodeAnswer[map[string]int](`{}`); err == nil || errors.As(err, &ae) {
		t.Errorf("a map answer: err %v, want a derivation error", err)
	}
}

// FuzzAnswerSpecMatchesDecode: for any answer text, the schema-only check
// and the typed decoder of the live runtime agree on its problems.
func FuzzAnswerSpecMatchesDecode(f *testing.F) {
	for _, seed := range []string{
		`{"title":"Fix it","priority":1,"owner":{"name":"Ann","email":"ann@example.com"}}`,
		`{"title":"Fi","priority":300,"tags":["a","b","c"],"owner":{"name":"Ann"}}`,
		`{"title":"Fix it","priority":1.5,"due":"tomorrow","wait":"soon","owner":{}}`,
		`{"title":null,"x":1}`, `[]`, `"text"`, `{`, ``, "```json\n{}\n```",
	} {
		f.Add(seed)
	}
	spec, err := onion.AnswerSpecOf[Ticket]()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		var live []string
		_, err := onion.DecodeAnswer[Ticket](answer)
		var ae *onion.AnswerError
		if errors.As(err, &ae) {
			live = ae.Problems
		} else if err != nil {
			t.Fatal(err)
		}
		got, err := spec.Problems(answer)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(live, got) {
			t.Errorf("answer %q:\n live %q\n spec %q", answer, live, got)
		}
	})
}
