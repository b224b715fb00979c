package script

import (
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// The boundary: every value onion hands a script, and every value a script
// hands back, passes through the redactor once decoding is done. A response
// is redacted as it arrives (body and headers, through the views that undo
// escapes); a builtin's result and error are redacted again when they cross
// back into the script (safe), since decoding (json, html, xml) and joining
// (re.sub, text, a parsed document's text) can make a secret whole that no
// view of the response showed; and the tool's result and error are redacted
// once more on their way to the model, for what the script joined itself.

// redactorKey holds the thread's redactor (see newThread).
const redactorKey = "onion/script.redactor"

// cleanKey holds the call's long strings known to be redacted (a response
// body, a decoded value redacted once), so that a crossing that hands one
// back again (ok's body, dig) does not read it again.
const cleanKey = "onion/script.clean"

// The strings remembered as clean: long ones only (a lookup hashes the
// string, far cheaper than redacting it), and only so many.
const (
	minClean = 1 << 10
	maxClean = 256
)

// clean returns the thread's set of clean strings.
func clean(thread *starlark.Thread) map[string]bool {
	m, _ := thread.Local(cleanKey).(map[string]bool)
	if m == nil {
		m = map[string]bool{}
		thread.SetLocal(cleanKey, m)
	}
	return m
}

// remember adds s, redacted, to the clean strings.
func remember(clean map[string]bool, s string) {
	if clean != nil && len(s) >= minClean && len(clean) < maxClean {
		clean[s] = true
	}
}

// maxWalk bounds the nesting a redaction walks into: deeper than any value
// onion decodes (JSON to 10,000 levels, markup to 512), so that only a
// value the script nested itself goes deeper.
const maxWalk = 10_001

// crossing redacts what a builtin returns to the script, and charges the
// bytes read to the call's steps.
func crossing(thread *starlark.Thread) func(starlark.Value, error) (starlark.Value, error) {
	return func(v starlark.Value, err error) (starlark.Value, error) {
		red, _ := thread.Local(redactorKey).(*redactor)
		if red.empty() {
			return v, err
		}
		if err != nil {
			return nil, red.error(err)
		}
		w := walker{red: red, budget: -1, clean: clean(thread)}
		if limit, _ := thread.Local(maxStepsKey).(int); limit > 0 {
			w.budget = max(0, limit-int(thread.Steps)) * stepBytes
		}
		v, _ = w.value(v, 0)
		if err := charge(thread, w.work); err != nil {
			return nil, err
		}
		return v, nil
	}
}

// error returns err, or an error that reads as err redacted and wraps it.
func (r *redactor) error(err error) error {
	if r == nil || err == nil {
		return err
	}
	if msg := r.redact(err.Error()); msg != err.Error() {
		return &redactedError{msg, err}
	}
	return err
}

// starlarkValue redacts v, a value computed when a script reads an
// attribute (a parsed document's text).
func (r *redactor) starlarkValue(v starlark.Value) starlark.Value {
	if r == nil {
		return v
	}
	w := walker{red: r, budget: -1}
	v, _ = w.value(v, 0)
	return v
}

// A walker redacts the strings inside a Starlark value: lists, dicts and
// sets in place (the script may hold them elsewhere too, and no secret
// should stay there either), tuples and structs by new ones. onion's own
// values (responses, headers, documents, matches) redact what they hold
// themselves.
type walker struct {
	red    *redactor
	seen   map[starlark.Value]bool // the lists, dicts and sets walked: a list may hold itself
	clean  map[string]bool         // long strings redacted already, nil for none
	work   int                     // bytes read
	budget int                     // bytes it may read, -1 for no bound: past it, it stops (and the caller's charge fails)
}

// visit reports whether the container x is walked for the first time.
func (w *walker) visit(x starlark.Value) bool {
	if w.seen == nil {
		w.seen = map[starlark.Value]bool{}
	}
	if w.seen[x] {
		return false
	}
	w.seen[x] = true
	return true
}

// spend counts n bytes to read, and reports whether they are within the
// budget.
func (w *walker) spend(n int) bool {
	w.work += n
	return w.budget < 0 || w.work <= w.budget
}

// value returns v redacted, and whether it is a new value.
func (w *walker) value(v starlark.Value, depth int) (starlark.Value, bool) {
	if depth > maxWalk || w.budget >= 0 && w.work > w.budget {
		return v, false
	}
	switch x := v.(type) {
	case starlark.String:
		if len(x) >= minClean && w.clean[string(x)] || !w.spend(len(x)) {
			break
		}
		s, ok := w.red.redacted(string(x))
		remember(w.clean, s)
		if ok {
			return starlark.String(s), true
		}
	case starlark.Bytes:
		if !w.spend(len(x)) {
			break
		}
		if s, ok := w.red.redacted(string(x)); ok {
			return starlark.Bytes(s), true
		}
	case starlark.Tuple:
		var out starlark.Tuple
		for i, e := range x {
			if n, changed := w.value(e, depth+1); changed {
				if out == nil {
					out = append(starlark.Tuple(nil), x...)
				}
				out[i] = n
			}
		}
		if out != nil {
			return out, true
		}
	case *starlark.List:
		if !w.visit(x) {
			break
		}
		for i := range x.Len() {
			if n, changed := w.value(x.Index(i), depth+1); changed {
				_ = x.SetIndex(i, n) // a frozen list was made at load, before any request
			}
		}
	case *starlark.Dict:
		if !w.visit(x) {
			break
		}
		items := x.Items()
		keys := false
		for i, kv := range items {
			k, kc := w.value(kv[0], depth+1)
			e, ec := w.value(kv[1], depth+1)
			items[i] = starlark.Tuple{k, e}
			keys = keys || kc
			if ec && !kc {
				_ = x.SetKey(k, e)
			}
		}
		if keys && x.Clear() == nil {
			for _, kv := range items {
				_ = x.SetKey(kv[0], kv[1])
			}
		}
	case *starlark.Set:
		if !w.visit(x) {
			break
		}
		var elems []starlark.Value
		changed := false
		for e := range starlark.Elements(x) {
			n, c := w.value(e, depth+1)
			elems, changed = append(elems, n), changed || c
		}
		if changed && x.Clear() == nil {
			for _, e := range elems {
				_ = x.Insert(e)
			}
		}
	case *starlarkstruct.Struct:
		d := starlark.StringDict{}
		changed := false
		for k, e := range x.Entries() {
			n, c := w.value(e, depth+1)
			d[k], changed = n, changed || c
		}
		if changed {
			return starlarkstruct.FromStringDict(x.Constructor(), d), true
		}
	}
	return v, false
}

// goValue redacts the strings inside v, a tool's result as toGo made it.
func (r *redactor) goValue(v any) any {
	switch x := v.(type) {
	case string:
		return r.redact(x)
	case []any:
		for i, e := range x {
			x[i] = r.goValue(e)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[r.redact(k)] = r.goValue(e)
		}
		return out
	}
	return v
}
