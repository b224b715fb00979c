package script

import (
	"strings"
	"unicode/utf8"

	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// methodSizes estimate what the methods of the built-in types that build
// values allocate, by "type.method". The others (find, startswith, get,
// pop, strip, elems ...) build nothing big: a number, a substring, an
// element already there, or a lazy view.
var methodSizes = map[string]sizeFunc{
	"string.capitalize": sameString, "string.lower": sameString, "string.upper": sameString, "string.title": sameString,
	"string.format":  stringFormat,
	"string.join":    stringJoin,
	"string.replace": stringReplace,
	"string.split":   stringSplit, "string.rsplit": stringSplit,
	"string.splitlines": func(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int64, error) {
		s := string(recv.(starlark.String))
		return slotBytes * int64(strings.Count(s, "\n")+strings.Count(s, "\r")+1), nil
	},
	"list.append": perCall(growBytes), "list.insert": perCall(growBytes),
	"list.extend":     argsLen(growBytes),
	"dict.setdefault": perCall(entryBytes),
	"dict.update":     argsLen(entryBytes),
	"dict.items":      recvLen(tupleBytes + slotBytes), "dict.keys": recvLen(slotBytes), "dict.values": recvLen(slotBytes),
	"set.add":    perCall(entryBytes),
	"set.update": argsLen(entryBytes),
	"set.union":  withRecv(argsLen(entryBytes)), "set.difference": recvLen(entryBytes),
	"set.intersection": recvLen(entryBytes), "set.symmetric_difference": withRecv(argsLen(entryBytes)),
}

func perCall(n int64) sizeFunc {
	return func(*starlark.Thread, starlark.Value, starlark.Tuple, []starlark.Tuple) (int64, error) { return n, nil }
}

// argsLen charges per bytes for each element of each argument.
func argsLen(per int64) sizeFunc {
	return func(_ *starlark.Thread, _ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int64, error) {
		n := int64(len(kwargs))
		for _, a := range args {
			n += lenOf(a)
		}
		return per * n, nil
	}
}

func recvLen(per int64) sizeFunc {
	return func(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int64, error) {
		return per * lenOf(recv), nil
	}
}

func withRecv(f sizeFunc) sizeFunc {
	return func(thread *starlark.Thread, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int64, error) {
		n, err := f(thread, recv, args, kwargs)
		return n + entryBytes*lenOf(recv), err
	}
}

// sameString is a string about the size of the receiver (case changes may
// lengthen a few letters).
func sameString(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int64, error) {
	return 2 * int64(len(recv.(starlark.String))), nil
}

// stringFormat: each replacement field may write the longest argument.
func stringFormat(thread *starlark.Thread, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int64, error) {
	format := string(recv.(starlark.String))
	var longest int64
	for _, a := range args {
		n, err := textSize(thread, a, remaining(thread))
		if err != nil {
			return 0, err
		}
		longest = max(longest, n)
	}
	for _, kv := range kwargs {
		n, err := textSize(thread, kv[1], remaining(thread))
		if err != nil {
			return 0, err
		}
		longest = max(longest, n)
	}
	return int64(len(format)) + int64(strings.Count(format, "{"))*longest, nil
}

// stringJoin adds up the strings joined.
func stringJoin(thread *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int64, error) {
	if len(args) != 1 {
		return 0, nil // join reports it
	}
	it, ok := args[0].(starlark.Iterable)
	if !ok {
		return 0, nil
	}
	sep := int64(len(recv.(starlark.String)))
	var n, count int64
	for e := range starlark.Elements(it) {
		if s, ok := e.(starlark.String); ok {
			n += int64(len(s)) + sep
		}
		if count++; n > remaining(thread) {
			break
		}
	}
	return n, charge(thread, int(count))
}

// stringReplace: each occurrence replaced may lengthen the string.
func stringReplace(thread *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int64, error) {
	s := string(recv.(starlark.String))
	if len(args) < 2 {
		return 0, nil
	}
	old, _ := starlark.AsString(args[0])
	repl, _ := starlark.AsString(args[1])
	count := int64(utf8.RuneCountInString(s) + 1)
	if old != "" {
		count = int64(strings.Count(s, old))
	}
	if len(args) > 2 {
		if c, err := starlark.AsInt32(args[2]); err == nil && c >= 0 {
			count = min(count, int64(c))
		}
	}
	if err := charge(thread, len(s)); err != nil {
		return 0, err
	}
	return int64(len(s)) + mulBytes(count, int64(max(len(repl)-len(old), 0))), nil
}

// stringSplit: one slot a part; without a separator, a part is at least
// two bytes.
func stringSplit(_ *starlark.Thread, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int64, error) {
	s := string(recv.(starlark.String))
	parts := int64(len(s)/2 + 1)
	if len(args) > 0 {
		if sep, ok := starlark.AsString(args[0]); ok && sep != "" {
			parts = int64(strings.Count(s, sep) + 1)
		}
	}
	return slotBytes * parts, nil
}

// universe are Starlark's builtins that build values, guarded; they are
// predeclared, so that they hide the unguarded ones.
var universe = starlark.StringDict{
	"list":      guardedUniverse("list", firstLen(slotBytes)),
	"tuple":     guardedUniverse("tuple", firstLen(slotBytes)),
	"reversed":  guardedUniverse("reversed", firstLen(slotBytes)),
	"sorted":    guardedUniverse("sorted", firstLen(2*slotBytes)),
	"enumerate": guardedUniverse("enumerate", firstLen(tupleBytes+slotBytes)),
	"set":       guardedUniverse("set", firstLen(entryBytes)),
	"dict":      guardedUniverse("dict", argsLen(entryBytes)),
	"bytes":     guardedUniverse("bytes", firstLen(1)),
	"zip": guardedUniverse("zip", func(_ *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int64, error) {
		shortest := int64(-1)
		for _, a := range args {
			if shortest < 0 || lenOf(a) < shortest {
				shortest = lenOf(a)
			}
		}
		return max(shortest, 0) * (tupleBytes + slotBytes*int64(len(args))), nil
	}),
	"str": guardedUniverse("str", func(thread *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int64, error) {
		if len(args) == 1 {
			if _, ok := args[0].(starlark.String); !ok {
				return textSize(thread, args[0], remaining(thread))
			}
		}
		return 0, nil
	}),
	"repr":    guardedUniverse("repr", textOfArgs),
	"print":   guardedUniverse("print", textOfArgs),
	"fail":    guardedUniverse("fail", textOfArgs),
	"getattr": starlark.NewBuiltin("getattr", guardedGetattr),
	"json":    guardedJSON,
}

func guardedUniverse(name string, size sizeFunc) *starlark.Builtin {
	return guarded(starlark.Universe[name].(*starlark.Builtin), size)
}

func firstLen(per int64) sizeFunc {
	return func(_ *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int64, error) {
		if len(args) == 0 {
			return 0, nil
		}
		if s, ok := args[0].(starlark.String); ok {
			return int64(len(s)), nil
		}
		return per * lenOf(args[0]), nil
	}
}

// textOfArgs is the text of the arguments written one after the other.
func textOfArgs(thread *starlark.Thread, _ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int64, error) {
	var n int64
	for _, a := range args {
		size, err := textSize(thread, a, remaining(thread)-n)
		if err != nil {
			return 0, err
		}
		n += size + 1
	}
	for _, kv := range kwargs {
		n += int64(len(kv[0].(starlark.String)))
		if s, ok := kv[1].(starlark.String); ok {
			n += int64(len(s))
		}
	}
	return n, nil
}

// guardedGetattr is getattr, whose methods come back guarded as x.name's do.
func guardedGetattr(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := starlark.Universe["getattr"].(*starlark.Builtin).CallInternal(thread, args, kwargs)
	if err != nil {
		return nil, err
	}
	return guardMethod(v), nil
}

// guardedJSON is the json module with encode and decode charged.
var guardedJSON = &starlarkstruct.Module{
	Name: "json",
	Members: starlark.StringDict{
		"encode":        guarded(jsonMember("encode"), textOfArgs),
		"encode_indent": guarded(jsonMember("encode_indent"), indentedText),
		"decode":        guarded(jsonMember("decode"), decodedSize),
		"indent":        guarded(jsonMember("indent"), indentedJSON),
	},
}

func jsonMember(name string) *starlark.Builtin {
	return starjson.Module.Members[name].(*starlark.Builtin)
}

// decodedSize bounds what decoding JSON text builds: each value at most a
// dict entry, and each value is at least one byte of text or follows a
// comma, a colon or a bracket.
func decodedSize(_ *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int64, error) {
	if len(args) == 0 {
		return 0, nil
	}
	s, _ := starlark.AsString(args[0])
	return jsonBytes(s), nil
}

func jsonBytes(s string) int64 { return int64(len(s)) + jsonValues(s)*entryBytes }

// jsonValues bounds the values in JSON text.
func jsonValues(s string) int64 {
	return int64(strings.Count(s, ",") + strings.Count(s, ":") + strings.Count(s, "[") + strings.Count(s, "{") + 1)
}

// indentedText is encode_indent: the encoding, with each value on a line
// of its own, indented by its depth.
func indentedText(thread *starlark.Thread, _ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int64, error) {
	if len(args) == 0 {
		return 0, nil
	}
	w := sizer{limit: remaining(thread)}
	w.walk(args[0], 0)
	if w.err != nil {
		return 0, w.err
	}
	prefix, indent := indentArgs(kwargs)
	return w.size + mulBytes(w.nodes, 1+prefix+int64(w.depth)*indent), charge(thread, int(min(w.nodes, 1<<40)))
}

// indentedJSON is indent: the text, with each value on a line of its own,
// indented by its depth.
func indentedJSON(thread *starlark.Thread, _ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int64, error) {
	if len(args) == 0 {
		return 0, nil
	}
	s, _ := starlark.AsString(args[0])
	depth, most := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '{':
			depth++
			most = max(most, depth)
		case ']', '}':
			depth--
		}
	}
	prefix, indent := indentArgs(kwargs)
	values := jsonValues(s)
	return int64(len(s)) + mulBytes(values, 1+prefix+int64(most)*indent), charge(thread, len(s))
}

// indentArgs are the lengths of the prefix and indent keyword arguments
// (by default "" and a tab).
func indentArgs(kwargs []starlark.Tuple) (prefix, indent int64) {
	indent = 1
	for _, kv := range kwargs {
		s, _ := starlark.AsString(kv[1])
		switch string(kv[0].(starlark.String)) {
		case "prefix":
			prefix = int64(len(s))
		case "indent":
			indent = int64(len(s))
		}
	}
	return prefix, indent
}
