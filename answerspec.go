package onion

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"

	"github.com/onionkit/onion/loop"
)

// This file is the typed answer as data, for a runtime that asks in one
// process and checks in another (a durable run's client and its worker):
// the Format and the schema answers are checked against travel, the Go
// type stays with the code that asked.

// AnswerSpec is what the answers of one Go type are held to, in a form
// that encodes as JSON and needs no Go type to be used: the Format the
// model is sent, and the schema its answers are checked against.
// AnswerSpecOf derives it from a type, as Ask does; Problems checks an
// answer with it and names the same problems Ask's checker names.
//
// The two schemas differ because strict mode cannot say everything:
// Format.Schema is the strict form, with every field required (optional
// ones nullable) and no length limits; Schema is the schema before it,
// with optional fields optional and the lengths the type states.
type AnswerSpec struct {
	// Format is sent with every request of the run as structured output.
	Format loop.Format `json:"format"`
	// Schema is the JSON Schema an answer is checked against.
	Schema json.RawMessage `json:"schema"`
}

// AnswerSpecOf derives the AnswerSpec of T as Ask does: a struct (or a
// pointer to one) as it is, any other type wrapped in an object,
// {"answer": ...}. T's doc comments and enum constants are read from its
// package's source, found from the caller's module or the call stack. A T
// whose schema strict mode cannot express is an error.
func AnswerSpecOf[T any]() (*AnswerSpec, error) {
	_, file, _, _ := runtime.Caller(1)
	at, err := answerTypeFor(reflect.TypeFor[T](), file)
	if err != nil {
		return nil, fmt.Errorf("onion.AnswerSpecOf: %w", err)
	}
	return at.spec(), nil
}

// spec is the AnswerSpec of the answers of at.
func (at *answerType) spec() *AnswerSpec {
	return &AnswerSpec{Format: at.format, Schema: append(json.RawMessage(nil), at.params.json...)}
}

// Problems checks text, a final answer, against s.Schema, as a raw tool's
// arguments are checked against its schema, and says what is wrong with
// it, one line each, nothing when it fits: the problems Ask's checker
// names for the same answer of the type s was derived from. The schema
// is compiled on each call (a run checks one answer or two); one that
// does not compile is an error.
func (s *AnswerSpec) Problems(text string) ([]string, error) {
	chk, err := newChecker(s.Schema, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("onion: the answer schema %q: %w", s.Format.Name, err)
	}
	ps := &paramSchema{json: s.Schema, checker: chk}
	text = unfence(text)
	if text == "" {
		return []string{errEmptyAnswer}, nil
	}
	if err := ps.explain(context.Background(), "answer", text, nil); err != nil {
		return problemsOf(err), nil
	}
	return nil, nil
}

// DecodeAnswer decodes text, a final answer such as the Output of a run
// started with T's AnswerSpec, into a T as Ask does: checked by T's
// checker, unwrapped from {"answer": ...} when T is not a struct. An
// answer that does not fit is an *AnswerError with its raw text.
func DecodeAnswer[T any](text string) (T, error) {
	var zero T
	_, file, _, _ := runtime.Caller(1)
	at, err := answerTypeFor(reflect.TypeFor[T](), file)
	if err != nil {
		return zero, fmt.Errorf("onion.DecodeAnswer: %w", err)
	}
	ar := &answerRun{typ: at}
	v, err := ar.value(text)
	if err != nil {
		return zero, err
	}
	return v.Interface().(T), nil
}
