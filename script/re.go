package script

import (
	"fmt"
	"regexp"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// reModule is the re module: regular expressions in Go's RE2 syntax, which
// match in time linear in the input (no backtracking), charged to MaxSteps.
var reModule = &starlarkstruct.Module{
	Name: "re",
	Members: starlark.StringDict{
		"match":   starlark.NewBuiltin("re.match", safe(reMatchFn(true))),
		"search":  starlark.NewBuiltin("re.search", safe(reMatchFn(false))),
		"findall": starlark.NewBuiltin("re.findall", safe(reFindall)),
		"sub":     starlark.NewBuiltin("re.sub", safe(reSub)),
		"split":   starlark.NewBuiltin("re.split", safe(reSplit)),
	},
}

// maxPattern bounds a pattern's length.
const maxPattern = 4096

// reCacheKey holds a thread's compiled patterns.
const reCacheKey = "onion/script.re"

// compile compiles pattern once per thread and charges a search of text
// to the step budget.
func compile(thread *starlark.Thread, fn, pattern, text string) (*regexp.Regexp, error) {
	if len(pattern) > maxPattern {
		return nil, fmt.Errorf("%s: the pattern is %d bytes; at most %d are allowed", fn, len(pattern), maxPattern)
	}
	if err := checkInput(fn, text); err != nil {
		return nil, err
	}
	cache, _ := thread.Local(reCacheKey).(map[string]*regexp.Regexp)
	re := cache[pattern]
	if re == nil {
		var err error
		if re, err = regexp.Compile(pattern); err != nil {
			return nil, fmt.Errorf("%s: %w", fn, err)
		}
		if cache == nil || len(cache) >= 64 {
			cache = map[string]*regexp.Regexp{}
			thread.SetLocal(reCacheKey, cache)
		}
		cache[pattern] = re
	}
	// The work of a search grows with the input times the pattern.
	if err := charge(thread, len(text)*(1+len(pattern)/32)); err != nil {
		return nil, err
	}
	return re, nil
}

// reMatchFn is re.match (anchored at the start, as in Python) or re.search.
func reMatchFn(anchored bool) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var pattern, text string
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "text", &text); err != nil {
			return nil, err
		}
		if anchored {
			pattern = `\A(?:` + pattern + `)`
		}
		re, err := compile(thread, b.Name(), pattern, text)
		if err != nil {
			return nil, err
		}
		idx := re.FindStringSubmatchIndex(text)
		if idx == nil {
			return starlark.None, nil
		}
		return &reMatch{re: re, text: text, idx: idx}, nil
	}
}

// groups is what findall makes of one match: the whole match without
// groups, the group with one, a tuple of them with several.
func groupsValue(m *reMatch) starlark.Value {
	n := m.re.NumSubexp()
	switch n {
	case 0:
		return m.group(0)
	case 1:
		return m.groupOr(1, starlark.String(""))
	}
	t := make(starlark.Tuple, n)
	for i := range n {
		t[i] = m.groupOr(i+1, starlark.String(""))
	}
	return t
}

func reFindall(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern, text string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "text", &text); err != nil {
		return nil, err
	}
	re, err := compile(thread, b.Name(), pattern, text)
	if err != nil {
		return nil, err
	}
	var out []starlark.Value
	for _, idx := range re.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, groupsValue(&reMatch{re: re, text: text, idx: idx}))
	}
	return chargeBuilt(thread, b.Name(), starlark.NewList(out))
}

// reSub is re.sub(pattern, repl, text, count=0): repl is a string in which
// $1 and ${name} stand for groups (Go's Expand), or a function of the match
// that returns the replacement.
func reSub(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern, text string
	var repl starlark.Value
	count := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "repl", &repl, "text", &text, "count?", &count); err != nil {
		return nil, err
	}
	re, err := compile(thread, b.Name(), pattern, text)
	if err != nil {
		return nil, err
	}
	n := -1
	if count > 0 {
		n = count
	}
	var b2 strings.Builder
	at := 0
	for _, idx := range re.FindAllStringSubmatchIndex(text, n) {
		b2.WriteString(text[at:idx[0]])
		switch r := repl.(type) {
		case starlark.String:
			b2.Write(re.ExpandString(nil, string(r), text, idx))
		case starlark.Callable:
			v, err := starlark.Call(thread, r, starlark.Tuple{&reMatch{re: re, text: text, idx: idx}}, nil)
			if err != nil {
				return nil, err
			}
			s, ok := starlark.AsString(v)
			if !ok {
				return nil, fmt.Errorf("%s: the replacement function returned %s, not a string", b.Name(), v.Type())
			}
			b2.WriteString(s)
		default:
			return nil, fmt.Errorf("%s: repl must be a string or a function, not %s", b.Name(), repl.Type())
		}
		at = idx[1]
		if b2.Len() > maxInput {
			return nil, &limitError{fmt.Sprintf("%s: the result grew beyond %d bytes", b.Name(), maxInput)}
		}
	}
	b2.WriteString(text[at:])
	return chargeBuilt(thread, b.Name(), starlark.String(b2.String()))
}

func reSplit(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern, text string
	maxsplit := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "text", &text, "maxsplit?", &maxsplit); err != nil {
		return nil, err
	}
	re, err := compile(thread, b.Name(), pattern, text)
	if err != nil {
		return nil, err
	}
	n := -1
	if maxsplit > 0 {
		n = maxsplit + 1
	}
	parts := re.Split(text, n)
	out := make([]starlark.Value, len(parts))
	for i, p := range parts {
		out[i] = starlark.String(p)
	}
	return chargeBuilt(thread, b.Name(), starlark.NewList(out))
}

// reMatch is a match: m.group(0), m.group(1) or m.group("name"), m.groups(),
// m.groupdict(), m.start(n) and m.end(n).
type reMatch struct {
	re   *regexp.Regexp
	text string
	idx  []int
}

var _ starlark.HasAttrs = (*reMatch)(nil)

func (m *reMatch) String() string        { return fmt.Sprintf("<match %q>", m.text[m.idx[0]:m.idx[1]]) }
func (m *reMatch) Type() string          { return "match" }
func (m *reMatch) Freeze()               {}
func (m *reMatch) Truth() starlark.Bool  { return true }
func (m *reMatch) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: match") }
func (m *reMatch) AttrNames() []string {
	return []string{"end", "group", "groupdict", "groups", "start"}
}

// groupOr is group i, or def when it took no part in the match.
func (m *reMatch) groupOr(i int, def starlark.Value) starlark.Value {
	if m.idx[2*i] < 0 {
		return def
	}
	return starlark.String(m.text[m.idx[2*i]:m.idx[2*i+1]])
}

func (m *reMatch) group(i int) starlark.Value { return m.groupOr(i, starlark.None) }

// index finds the group named by v, an int or a group name.
func (m *reMatch) index(v starlark.Value) (int, error) {
	if s, ok := v.(starlark.String); ok {
		if i := m.re.SubexpIndex(string(s)); i >= 0 {
			return i, nil
		}
		return 0, fmt.Errorf("no group named %s", s)
	}
	i, err := starlark.AsInt32(v)
	if err != nil {
		return 0, fmt.Errorf("a group is an int or a name, not %s", v.Type())
	}
	if i < 0 || i > m.re.NumSubexp() {
		return 0, fmt.Errorf("no group %d: the pattern has %d", i, m.re.NumSubexp())
	}
	return i, nil
}

func (m *reMatch) Attr(name string) (starlark.Value, error) {
	switch name {
	case "group", "start", "end":
		return starlark.NewBuiltin(name, safe(func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var g starlark.Value = starlark.MakeInt(0)
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0, &g); err != nil {
				return nil, err
			}
			i, err := m.index(g)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b.Name(), err)
			}
			switch name {
			case "start":
				return starlark.MakeInt(m.idx[2*i]), nil
			case "end":
				return starlark.MakeInt(m.idx[2*i+1]), nil
			}
			return m.group(i), nil
		})), nil
	case "groups":
		return starlark.NewBuiltin(name, safe(func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			t := make(starlark.Tuple, m.re.NumSubexp())
			for i := range t {
				t[i] = m.group(i + 1)
			}
			return t, nil
		})), nil
	case "groupdict":
		return starlark.NewBuiltin(name, safe(func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			d := starlark.NewDict(m.re.NumSubexp())
			for i, n := range m.re.SubexpNames() {
				if n != "" {
					_ = d.SetKey(starlark.String(n), m.group(i))
				}
			}
			return d, nil
		})), nil
	}
	return nil, nil
}
