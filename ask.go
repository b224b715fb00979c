package onion

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/onionkit/onion/loop"
)

// This file is the typed final answer: Ask runs the loop as Run does and
// holds the final answer to a Go type, whose schema is derived as a
// struct argument's is and sent as structured output. The loop hands the
// answer out to be checked (loop.CheckAnswer); the live runtime checks it
// with the type's argument checker.

// Ask sends prompt through the loop, with the agent's tools as Run does,
// and returns the final answer as a T. The schema of T is derived as a
// tool's struct argument is (json and jsonschema tags, doc comments,
// enums of named types with constants), in OpenAI's strict form, and sent
// with every request of the run as structured output: response_format
// json_schema with strict true on Chat Completions, text.format on the
// Responses API. A T that is not a struct, such as an enum type, a slice
// or a number, travels wrapped in an object, {"answer": ...}, since
// structured output must be an object; Ask unwraps it.
//
// The answer is decoded and checked by the same checker as tool
// arguments. An answer that does not fit gets one corrective turn naming
// every problem; when the answer after it does not fit either, Ask returns
// an *AnswerError with the answer's raw text. Result.Output holds the
// answer's JSON text as the model gave it.
//
// A T whose schema OpenAI's strict mode cannot express (a map, a
// free-form value) is an error before any request.
func Ask[T any](ctx context.Context, a *Agent, prompt string) (T, *Result, error) {
	_, file, _, _ := runtime.Caller(1)
	v, res, _, err := ask[T](ctx, a, nil, nil, prompt, file, "onion.Ask")
	return v, res, err
}

// AskIn runs prompt like Ask, in the conversation c: after its history,
// to which the turn is added when the answer fits, as Conversation.Run
// adds it.
func AskIn[T any](ctx context.Context, c *Conversation, prompt string) (T, *Result, error) {
	_, file, _, _ := runtime.Caller(1)
	history, prev := c.lease()
	v, res, turn, err := ask[T](ctx, c.agent, history, prev, prompt, file, "onion.AskIn")
	c.keep(turn)
	return v, res, err
}

// ask runs prompt after history (prev: see run) with the answer held to
// T; file is the caller's source file, name the entry point, for errors.
// The turn is kept only when the answer fits.
func ask[T any](ctx context.Context, a *Agent, history []Message, prev *loop.State, prompt, file, name string) (T, *Result, runTurn, error) {
	var zero T
	at, err := answerTypeFor(reflect.TypeFor[T](), file)
	if err != nil {
		return zero, nil, runTurn{}, fmt.Errorf("%s: %w", name, err)
	}
	ar := &answerRun{typ: at}
	res, turn, err := a.runWith(ctx, history, prev, prompt, nil, ar)
	if err != nil {
		return zero, res, turn, err
	}
	v, err := ar.value(res.Output)
	if err != nil {
		turn.msgs = nil
		return zero, res, turn, err
	}
	return v.Interface().(T), res, turn, nil
}

// AskStream runs prompt like Ask and yields events as Stream does. The
// last event, EventDone, carries the Result and, in Answer, the typed
// answer: a T (not a pointer to one). When the answer does not fit, the
// last event comes with an *AnswerError and Answer is nil.
func AskStream[T any](ctx context.Context, a *Agent, prompt string) iter.Seq2[Event, error] {
	_, file, _, _ := runtime.Caller(1)
	at, err := answerTypeFor(reflect.TypeFor[T](), file)
	return func(yield func(Event, error) bool) {
		if err != nil {
			yield(Event{Kind: EventDone}, fmt.Errorf("onion.AskStream: %w", err))
			return
		}
		ar := &answerRun{typ: at} // each iteration is a run of its own
		streamRun(ctx,
			func(ctx context.Context, events chan<- Event) (*Result, error) {
				res, _, err := a.runWith(ctx, nil, nil, prompt, events, ar)
				return res, err
			},
			func(res *Result, err error) (Event, error) {
				e := Event{Kind: EventDone, Result: res}
				if err != nil {
					return e, err
				}
				v, err := ar.value(res.Output)
				if err != nil {
					return e, err
				}
				e.Answer = v.Interface()
				return e, nil
			})(yield)
	}
}

// AnswerError reports a final answer that does not fit the type Ask
// asked for, after its corrective turn (or with no room left in the token
// budget for one).
type AnswerError struct {
	// Type is the Go type asked for, such as main.Report.
	Type string
	// Raw is the answer as the model gave it.
	Raw string
	// Problems say what is wrong with it, one line each, naming the
	// field, what was expected and what came.
	Problems []string
}

// Error names the type and lists the problems, one a line.
func (e *AnswerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "onion: the answer does not fit %s:", e.Type)
	writeProblems(&b, e.Problems)
	return b.String()
}

// ErrInvalidAnswer matches every *AnswerError with errors.Is.
var ErrInvalidAnswer = errors.New("invalid answer")

// Is makes errors.Is(err, ErrInvalidAnswer) true.
func (e *AnswerError) Is(target error) bool { return target == ErrInvalidAnswer }

// answerType is what the answers of one Go type are held to: the Format
// the model is sent, and the checker of the struct they decode into.
type answerType struct {
	goType  reflect.Type // T
	format  loop.Format
	params  *paramSchema
	into    reflect.Type // the struct decoded into: T, *T's element, or {Answer T}
	wrapped bool         // into is {Answer T}
	ptr     bool         // T is a pointer to into
}

var answerCache sync.Map // reflect.Type → *answerType

// answerTypeFor returns the answerType of t, derived once per type. hint
// is the source file of the code that asks, from which the source of t's
// package is found (doc comments, enum constants).
func answerTypeFor(t reflect.Type, hint string) (*answerType, error) {
	if at, ok := answerCache.Load(t); ok {
		return at.(*answerType), nil
	}
	at, err := deriveAnswerType(t, hint)
	if err != nil {
		return nil, fmt.Errorf("answer type %s: %w", t, err)
	}
	actual, _ := answerCache.LoadOrStore(t, at)
	return actual.(*answerType), nil
}

func deriveAnswerType(t reflect.Type, hint string) (*answerType, error) {
	at := &answerType{goType: t, into: t}
	named := t
	switch {
	case isObject(t):
	case t.Kind() == reflect.Pointer && isObject(t.Elem()):
		at.into, at.ptr, named = t.Elem(), true, t.Elem()
	default:
		at.into, at.wrapped = reflect.StructOf([]reflect.StructField{{Name: "Answer", Type: t, Tag: `json:"answer"`}}), true
	}
	p, err := paramsFor(at.into, hint)
	if err != nil {
		return nil, err
	}
	schema, err := p.strict()
	if err != nil {
		return nil, err
	}
	at.params = p
	at.format = loop.Format{Name: formatName(named), Schema: schema, Strict: true,
		Description: deriver{hint: hint}.lookupComment(named, "")}
	return at, nil
}

// isObject reports whether t is a struct that travels as a JSON object.
func isObject(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t != timeType &&
		!t.Implements(customSchemaType) && !reflect.PointerTo(t).Implements(customSchemaType)
}

// formatName names the schema of the answers of t for the provider: the
// type's name in snake case, in the letters the provider allows, or
// "answer".
func formatName(t reflect.Type) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		case r == '[' || r == ',' || r == '.':
			return '_'
		}
		return -1
	}, snakeCase(t.Name()))
	name = strings.Trim(name, "_")
	if name == "" {
		return "answer"
	}
	return name[:min(len(name), 64)]
}

// answerRun is the answer of one run of Ask: what the last check found.
// Only the goroutine that drives the run touches it until the run is
// over.
type answerRun struct {
	typ      *answerType
	checked  bool
	text     string        // the answer last checked
	decoded  reflect.Value // its value (into), when it fit
	problems []string      // what did not fit
}

// check decodes and checks text, an answer of the run, and returns its
// problems.
func (r *answerRun) check(text string) []string {
	r.checked, r.text = true, text
	r.decoded, r.problems = r.typ.decode(text)
	return r.problems
}

// value is the run's answer as a T, given the run's output: the answer
// last checked when it is that output and fit, else an *AnswerError.
func (r *answerRun) value(output string) (reflect.Value, error) {
	if !r.checked || r.text != output {
		// An output the loop never handed out: the fallback of a run
		// whose budget left no room for an answer.
		r.check(output)
	}
	if len(r.problems) > 0 {
		return reflect.Value{}, &AnswerError{Type: r.typ.goType.String(), Raw: output, Problems: r.problems}
	}
	v := r.decoded
	switch {
	case r.typ.wrapped:
		v = v.Field(0)
	case r.typ.ptr:
		v = v.Addr()
	}
	return v, nil
}

// decode decodes an answer's text into a new value of into and checks it.
func (at *answerType) decode(text string) (reflect.Value, []string) {
	text = unfence(text)
	if text == "" {
		return reflect.Value{}, []string{errEmptyAnswer}
	}
	v := reflect.New(at.into)
	err := at.params.decodeArgs(context.Background(), "answer", text, v.Elem())
	if err == nil {
		return v.Elem(), nil
	}
	return reflect.Value{}, problemsOf(err)
}

// problemsOf is what err says is wrong with an answer, one line each: an
// *ArgumentError's problems, or err's text as the one problem.
func problemsOf(err error) []string {
	var ae *ArgumentError
	if !errors.As(err, &ae) {
		return []string{err.Error()}
	}
	problems := slices.Clone(ae.Problems)
	for i, p := range problems {
		if rest, ok := strings.CutPrefix(p, argsNotJSON); ok {
			problems[i] = "the answer is not valid JSON: " + rest
		}
	}
	return problems
}

// errEmptyAnswer is the problem of an answer with no text.
const errEmptyAnswer = "the answer is empty: answer with one JSON object that fits the schema"

// unfence trims spaces and a Markdown code fence around text, which a
// model that ignores structured output may put around its JSON.
func unfence(text string) string {
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, "```"); ok {
		if body, ok := strings.CutSuffix(rest, "```"); ok {
			if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[\"") {
				body = body[nl+1:] // the fence's language, such as json
			}
			text = strings.TrimSpace(body)
		}
	}
	return text
}
