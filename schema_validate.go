package onion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// This file is the full validator's side: every problem it finds in a
// call's arguments, worded for the model as "field: what is wrong".

// validate runs the full JSON Schema validator over args, with the
// leniency every path applies (null for an optional field counts as
// absent), and returns every problem it finds as "field: what is wrong"
// lines. args must have passed checkShape, and the caller holds
// c.patterns: a pattern that gave up is a problem of its own, and the
// mismatches it left undecided are none.
func (c *checker) validate(args []byte) []string {
	inst, err := santhosh.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return []string{argsNotJSON + err.Error()}
	}
	inst = dropNullOptionals(inst, c.validator)
	err = c.validator.Validate(inst)
	var out []string
	run := c.patterns.current()
	if run != nil && run.gaveUp != nil {
		// Even where the validator accepts (a pattern under "not"), a
		// value no pattern could decide is not accepted.
		out = append(out, run.gaveUp.problem(inst))
	}
	var ve *santhosh.ValidationError
	if err != nil && errors.As(err, &ve) {
		collectProblems(ve, inst, run, &out)
	}
	slices.Sort(out) // the validator's order follows map order
	return out
}

// dropNullOptionals removes, in the objects of v that cs describes, the
// properties sent as null that cs does not require: a strict schema tells
// the model to send null for an optional field, and null means absent on
// every path. In a strict schema an optional property is required and
// "anyOf: [schema, null]".
func dropNullOptionals(v any, cs *santhosh.Schema) any {
	if cs == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			prop := cs.Properties[k]
			if prop == nil {
				continue
			}
			inner, wrapped := nullable(prop)
			if e == nil && (wrapped || !slices.Contains(cs.Required, k)) {
				delete(x, k)
				continue
			}
			x[k] = dropNullOptionals(e, inner)
		}
	case []any:
		items := cs.Items2020
		if it, ok := cs.Items.(*santhosh.Schema); ok {
			items = it
		}
		for i, e := range x {
			x[i] = dropNullOptionals(e, items)
		}
	}
	return v
}

// collectProblems flattens the validator's error tree into one line per
// leaf: the field's path and what is wrong with it, in the words the
// decoder uses.
func collectProblems(ve *santhosh.ValidationError, inst any, run *patternRun, out *[]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectProblems(c, inst, run, out)
		}
		return
	}
	add := func(tokens []string, what string) {
		line := fieldPath(tokens) + ": " + what
		if !slices.Contains(*out, line) {
			*out = append(*out, line)
		}
	}
	at := ve.InstanceLocation
	got := "?"
	if v, ok := valueAt(inst, at); ok {
		got = describeValue(v)
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			add(append(slices.Clip(at), m), errMissing.Error())
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			add(append(slices.Clip(at), p), errUnknownField.Error())
		}
	case *kind.Type:
		add(at, "expected "+strings.Join(k.Want, " or ")+", got "+got)
	case *kind.Enum:
		add(at, "expected one of "+enumList(k.Want)+", got "+got)
	case *kind.Format:
		add(at, "expected "+formatHint(k.Want)+", got "+got)
	case *kind.Pattern:
		if run != nil && run.undecided[[2]string{k.Want, k.Got}] {
			return // not a mismatch: its match gave up, which validate reports
		}
		if k.Want == durationPattern {
			add(at, "expected "+durationHint+", got "+got)
		} else {
			add(at, "expected a string matching "+quoteValue(k.Want)+", got "+got)
		}
	case *kind.MinLength:
		add(at, fmt.Sprintf("expected at least %d characters, got %d", k.Want, k.Got))
	case *kind.MaxLength:
		add(at, fmt.Sprintf("expected at most %d characters, got %d", k.Want, k.Got))
	case *kind.Minimum:
		add(at, "expected a number >= "+k.Want.RatString()+", got "+got)
	case *kind.Maximum:
		add(at, "expected a number <= "+k.Want.RatString()+", got "+got)
	case *kind.ExclusiveMinimum:
		add(at, "expected a number > "+k.Want.RatString()+", got "+got)
	case *kind.ExclusiveMaximum:
		add(at, "expected a number < "+k.Want.RatString()+", got "+got)
	case *kind.MinItems:
		add(at, fmt.Sprintf("expected at least %d items, got %d", k.Want, k.Got))
	case *kind.MaxItems:
		add(at, fmt.Sprintf("expected at most %d items, got %d", k.Want, k.Got))
	default:
		add(at, ve.ErrorKind.LocalizedString(english)+", got "+got)
	}
}

var english = message.NewPrinter(language.English)

// describeValue names a value as messages do: its JSON type, and for
// scalars the value itself, strings quoted as JSON.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case string:
		return "string " + quoteValue(x)
	case json.Number:
		return "number " + truncate(string(x), 40)
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprint(v)
}

// fieldPath renders a JSON pointer's tokens as a.b[0].c; the root is
// "arguments".
func fieldPath(tokens []string) string {
	if len(tokens) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for _, tok := range tokens {
		if tok != "" && strings.Trim(tok, "0123456789") == "" {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// valueAt finds the value at a JSON pointer's tokens.
func valueAt(v any, tokens []string) (any, bool) {
	for _, tok := range tokens {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
