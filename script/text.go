package script

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// textModule is the text module: the string work a connector does on an
// answer before the model reads it.
var textModule = &starlarkstruct.Module{
	Name: "text",
	Members: starlark.StringDict{
		"strip":    textFn("text.strip", textStrip),
		"split":    starlark.NewBuiltin("text.split", safe(textSplit)),
		"lines":    textFn("text.lines", func(s string) starlark.Value { return strList(nonEmptyLines(s)) }),
		"words":    textFn("text.words", func(s string) starlark.Value { return strList(strings.Fields(s)) }),
		"squash":   textFn("text.squash", func(s string) starlark.Value { return starlark.String(strings.Join(strings.Fields(s), " ")) }),
		"lower":    textFn("text.lower", func(s string) starlark.Value { return starlark.String(strings.ToLower(s)) }),
		"upper":    textFn("text.upper", func(s string) starlark.Value { return starlark.String(strings.ToUpper(s)) }),
		"truncate": starlark.NewBuiltin("text.truncate", safe(textTruncate)),
	},
}

// textFn makes a builtin of a function of one string.
func textFn(name string, fn func(string) starlark.Value) *starlark.Builtin {
	return starlark.NewBuiltin(name, safe(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var s string
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
			return nil, err
		}
		if err := checkInput(b.Name(), s); err != nil {
			return nil, err
		}
		if err := charge(thread, len(s)); err != nil {
			return nil, err
		}
		return chargeBuilt(thread, b.Name(), fn(s))
	}))
}

func textStrip(s string) starlark.Value { return starlark.String(strings.TrimSpace(s)) }

func strList(parts []string) *starlark.List {
	out := make([]starlark.Value, len(parts))
	for i, p := range parts {
		out[i] = starlark.String(p)
	}
	return starlark.NewList(out)
}

// nonEmptyLines are the lines of s, each stripped, without blank ones.
func nonEmptyLines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// textSplit is text.split(s, sep=None, maxsplit=-1): on runs of whitespace
// without sep, else on sep; each part stripped, empty parts left out.
func textSplit(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	var sep starlark.Value = starlark.None
	maxsplit := -1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "s", &s, "sep?", &sep, "maxsplit?", &maxsplit); err != nil {
		return nil, err
	}
	if err := checkInput(b.Name(), s); err != nil {
		return nil, err
	}
	if err := charge(thread, len(s)); err != nil {
		return nil, err
	}
	var parts []string
	switch sp := sep.(type) {
	case starlark.NoneType:
		parts = strings.Fields(s)
		if maxsplit >= 0 && len(parts) > maxsplit+1 {
			// Keep the rest of the text as it is after the last split.
			rest := s
			for range maxsplit {
				rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
				rest = rest[strings.IndexFunc(rest, unicode.IsSpace):]
			}
			parts = append(parts[:maxsplit], strings.TrimSpace(rest))
		}
	case starlark.String:
		if sp == "" {
			return nil, fmt.Errorf("%s: empty separator", b.Name())
		}
		n := -1
		if maxsplit >= 0 {
			n = maxsplit + 1
		}
		for _, p := range strings.SplitN(s, string(sp), n) {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
	default:
		return nil, fmt.Errorf("%s: sep must be a string, not %s", b.Name(), sep.Type())
	}
	return chargeBuilt(thread, b.Name(), strList(parts))
}

// textTruncate is text.truncate(s, n, marker="…"): s when it has at most n
// characters, else its first n characters (fewer, to end at a space when
// one is near) followed by marker.
func textTruncate(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	var n int
	marker := "…"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "s", &s, "n", &n, "marker?", &marker); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("%s: n must not be negative", b.Name())
	}
	if err := charge(thread, min(len(s), 4*n)); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(s) <= n {
		return starlark.String(s), nil
	}
	end := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	cutAt := end
	if sp := strings.LastIndexFunc(s[:end], unicode.IsSpace); sp > end*4/5 {
		cutAt = sp
	}
	return starlark.String(strings.TrimRightFunc(s[:cutAt], unicode.IsSpace) + marker), nil
}
