package oniontest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	// maxDifferences bounds the differences a failure lists.
	maxDifferences = 20
	// maxShown is the length from which a value is shown only around its
	// first difference from the other.
	maxShown = 160
)

// requestDiff lists how sent differs from the recorded request, leaving
// out the fields at the volatile paths: for each difference its path and
// the two values (- recorded, + sent). It is "" when they do not differ.
func requestDiff(recorded, sent recordedRequest, volatile []string) string {
	var d differ
	d.compare("method", recorded.Method, sent.Method)
	d.compare("path", recorded.Path, sent.Path)
	d.compare("query", recorded.Query, sent.Query)
	if recorded.JSON != nil && sent.JSON != nil {
		a, aerr := decodeJSON(recorded.JSON)
		b, berr := decodeJSON(sent.JSON)
		if aerr == nil && berr == nil {
			for _, p := range volatile {
				segs := strings.Split(p, ".")
				a, b = drop(a, segs), drop(b, segs)
			}
			d.walk("", a, b)
			return d.String()
		}
	}
	d.compare("body", bodyText(recorded), bodyText(sent))
	return d.String()
}

func bodyText(r recordedRequest) string {
	if r.JSON != nil {
		return string(r.JSON)
	}
	return r.Body
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // compare numbers as they were written
	var v any
	err := dec.Decode(&v)
	return v, err
}

// volatileValue stands for an array element at a volatile path, so that
// the elements after it keep their indices.
type volatileValue struct{}

func (volatileValue) MarshalJSON() ([]byte, error) { return []byte(`"(volatile)"`), nil }

// drop removes from v what the path segs names: a key, an index or "*"
// for any per segment. An element of an array is replaced by
// volatileValue rather than removed.
func drop(v any, segs []string) any {
	if len(segs) == 0 {
		return volatileValue{}
	}
	seg, rest := segs[0], segs[1:]
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if seg != "*" && seg != k {
				continue
			}
			if len(rest) == 0 {
				delete(v, k)
			} else {
				v[k] = drop(c, rest)
			}
		}
	case []any:
		for i, c := range v {
			if seg == "*" || seg == strconv.Itoa(i) {
				v[i] = drop(c, rest)
			}
		}
	}
	return v
}

// differ collects differences.
type differ struct {
	lines []string
	more  int // differences found past maxDifferences
}

// absent stands for a key or element one side does not have.
type absent struct{}

func (d *differ) compare(path string, a, b string) {
	if a != b {
		d.add(path, a, b)
	}
}

// walk compares two decoded JSON values at path.
func (d *differ) walk(path string, a, b any) {
	switch a := a.(type) {
	case map[string]any:
		if b, ok := b.(map[string]any); ok {
			keys := slices.Collect(maps.Keys(a))
			for k := range b {
				if _, ok := a[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				va, oka := a[k]
				vb, okb := b[k]
				switch {
				case !oka:
					d.add(join(path, k), absent{}, vb)
				case !okb:
					d.add(join(path, k), va, absent{})
				default:
					d.walk(join(path, k), va, vb)
				}
			}
			return
		}
	case []any:
		if b, ok := b.([]any); ok {
			for i := range max(len(a), len(b)) {
				p := join(path, strconv.Itoa(i))
				switch {
				case i >= len(a):
					d.add(p, absent{}, b[i])
				case i >= len(b):
					d.add(p, a[i], absent{})
				default:
					d.walk(p, a[i], b[i])
				}
			}
			return
		}
	}
	if !reflect.DeepEqual(a, b) {
		if path == "" {
			path = "json"
		}
		d.add(path, a, b)
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *differ) add(path string, a, b any) {
	if len(d.lines) == maxDifferences {
		d.more++
		return
	}
	sa, sb := excerpts(show(a), show(b))
	d.lines = append(d.lines, fmt.Sprintf("  %s:\n    - %s\n    + %s", path, sa, sb))
}

// show is a value as the diff shows it: compact JSON.
func show(v any) string {
	switch v := v.(type) {
	case absent:
		return "(absent)"
	case string:
		return string(marshal(v))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// excerpts shortens two long values to the stretch around their first
// difference.
func excerpts(a, b string) (string, string) {
	if len(a) <= maxShown && len(b) <= maxShown {
		return a, b
	}
	common := 0
	for common < len(a) && common < len(b) && a[common] == b[common] {
		common++
	}
	start := max(common-maxShown/4, 0)
	for start > 0 && start < len(a) && !utf8.RuneStart(a[start]) {
		start--
	}
	cut := func(s string) string {
		out := s[min(start, len(s)):]
		if end := maxShown; len(out) > end {
			for end > 0 && !utf8.RuneStart(out[end]) {
				end--
			}
			out = out[:end] + "…"
		}
		if start > 0 {
			out = "…" + out
		}
		return out
	}
	return cut(a), cut(b)
}

func (d *differ) String() string {
	if len(d.lines) == 0 {
		return ""
	}
	s := "  (- recorded, + sent)\n" + strings.Join(d.lines, "\n") + "\n"
	if d.more > 0 {
		s += fmt.Sprintf("  and %d more differences\n", d.more)
	}
	return s
}
