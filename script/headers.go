package script

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"go.starlark.net/starlark"
)

// headerDict is a response's headers as a script sees them: a read-only
// mapping of lower-case names to values (several joined by ", "), in which
// a lookup ignores case, so that headers["location"], headers["Location"]
// and headers.get("location") all find the Location header.
type headerDict struct {
	names  []string          // lower-case, sorted
	values map[string]string // by lower-case name
}

var (
	_ starlark.IterableMapping = (*headerDict)(nil)
	_ starlark.Sequence        = (*headerDict)(nil)
	_ starlark.HasAttrs        = (*headerDict)(nil)
)

// newHeaderDict makes the script's view of h, redacting every name and value
// with red.
func newHeaderDict(h http.Header, red *redactor) *headerDict {
	d := &headerDict{values: make(map[string]string, len(h))}
	for k, vs := range h {
		name := strings.ToLower(red.redact(k))
		v := red.redact(strings.Join(vs, ", "))
		if old, dup := d.values[name]; dup {
			v = old + ", " + v
		} else {
			d.names = append(d.names, name)
		}
		d.values[name] = v
	}
	sort.Strings(d.names)
	return d
}

func (d *headerDict) String() string {
	var b strings.Builder
	b.WriteString("{")
	for i, k := range d.names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", starlark.String(k), starlark.String(d.values[k]))
	}
	b.WriteString("}")
	return b.String()
}
func (d *headerDict) Type() string          { return "headers" }
func (d *headerDict) Freeze()               {} // immutable
func (d *headerDict) Truth() starlark.Bool  { return len(d.names) > 0 }
func (d *headerDict) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: headers") }
func (d *headerDict) Len() int              { return len(d.names) }

// Get looks a name up, ignoring case.
func (d *headerDict) Get(k starlark.Value) (starlark.Value, bool, error) {
	name, ok := k.(starlark.String)
	if !ok {
		return nil, false, fmt.Errorf("header names are strings, not %s", k.Type())
	}
	v, found := d.values[strings.ToLower(string(name))]
	if !found {
		return nil, false, nil
	}
	return starlark.String(v), true, nil
}

func (d *headerDict) Iterate() starlark.Iterator { return &headerIter{d: d} }

func (d *headerDict) Items() []starlark.Tuple {
	out := make([]starlark.Tuple, len(d.names))
	for i, k := range d.names {
		out[i] = starlark.Tuple{starlark.String(k), starlark.String(d.values[k])}
	}
	return out
}

type headerIter struct {
	d *headerDict
	i int
}

func (it *headerIter) Next(p *starlark.Value) bool {
	if it.i >= len(it.d.names) {
		return false
	}
	*p = starlark.String(it.d.names[it.i])
	it.i++
	return true
}
func (it *headerIter) Done() {}

func (d *headerDict) AttrNames() []string { return []string{"get", "items", "keys", "values"} }

// Attr gives the dict methods that read: get, items, keys and values.
func (d *headerDict) Attr(name string) (starlark.Value, error) {
	switch name {
	case "get":
		return starlark.NewBuiltin("get", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var k, def starlark.Value = nil, starlark.None
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &k, &def); err != nil {
				return nil, err
			}
			v, found, err := d.Get(k)
			if err != nil || !found {
				return def, err
			}
			return v, nil
		}), nil
	case "items":
		return d.lister("items", func(k string) starlark.Value {
			return starlark.Tuple{starlark.String(k), starlark.String(d.values[k])}
		}), nil
	case "keys":
		return d.lister("keys", func(k string) starlark.Value { return starlark.String(k) }), nil
	case "values":
		return d.lister("values", func(k string) starlark.Value { return starlark.String(d.values[k]) }), nil
	}
	return nil, nil
}

func (d *headerDict) lister(name string, elem func(string) starlark.Value) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
			return nil, err
		}
		l := make([]starlark.Value, len(d.names))
		for i, k := range d.names {
			l[i] = elem(k)
		}
		return starlark.NewList(l), nil
	})
}

// goMap is the headers as the model reads them in a returned response.
func (d *headerDict) goMap() map[string]any {
	m := make(map[string]any, len(d.names))
	for _, k := range d.names {
		m[k] = d.values[k]
	}
	return m
}
