package redact

import (
	"encoding/hex"
	"html"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A view is the input with one kind of escape or joining undone: dec holds
// the decoded bytes and esc the escapes decoded, in order; the bytes between
// escapes are the input's own. A strided view (stride > 1) holds every
// stride-th byte of the input from shift on instead.
type view struct {
	dec           []byte
	esc           []escape
	stride, shift int
	of            *view // the view this one decodes further, nil for the input
}

// An escape is dec[at:at+n], decoded from input[from:to]; n is 0 for markup
// that is dropped.
type escape struct{ at, n, from, to int }

// input returns the range of input bytes decoded byte d came from.
func (v *view) input(d int) (from, to int) {
	from, to = v.own(d)
	if v.of != nil {
		from, _ = v.of.input(from)
		_, to = v.of.input(to - 1)
	}
	return from, to
}

// own returns the range of the bytes v decodes that d came from.
func (v *view) own(d int) (from, to int) {
	if v.stride > 1 {
		o := d*v.stride + v.shift
		return o, o + 1
	}
	i, _ := slices.BinarySearchFunc(v.esc, d, func(e escape, d int) int {
		if e.at > d {
			return 1
		}
		return -1
	})
	if i == 0 {
		return d, d + 1
	}
	e := v.esc[i-1]
	if d < e.at+e.n {
		return e.from, e.to
	}
	o := e.to + d - (e.at + e.n)
	return o, o + 1
}

func newView(capacity int) *view { return &view{dec: make([]byte, 0, capacity)} }

// escaped appends the bytes b decoded from input[from:to].
func (v *view) escaped(b []byte, from, to int) {
	v.esc = append(v.esc, escape{len(v.dec), len(b), from, to})
	v.dec = append(v.dec, b...)
}

// views returns the views of s that differ from s: what an application's
// escaping could turn s into, JSON escapes and percent-encoding; and with
// markup, what a parser could (html.parse, xml.parse and json.decode in a
// script), character references, markup and UTF-16 besides.
func views(s string, markup bool) []*view {
	var out []*view
	j := jsonView(s)
	all := []*view{j, percentView(s)}
	if markup {
		all = append(all, entityView(s), markupView(s))
	}
	for _, v := range all {
		if v != nil && len(v.esc) > 0 {
			out = append(out, v)
		}
	}
	if !markup {
		return out
	}
	// A JSON string often holds HTML or a URL: undo those inside it too.
	if j != nil && len(j.esc) > 0 {
		dec := string(j.dec)
		for _, mk := range []func(string) *view{percentView, entityView, markupView} {
			if v := mk(dec); v != nil && len(v.esc) > 0 {
				v.of = j
				out = append(out, v)
			}
		}
	}
	// UTF-16 text of an ASCII secret is its bytes with a NUL before or after
	// each: every other byte, from the first or the second, spells it.
	if strings.IndexByte(s, 0) >= 0 {
		for shift := range 2 {
			v := &view{stride: 2, shift: shift, dec: make([]byte, 0, len(s)/2)}
			for i := shift; i < len(s); i += 2 {
				v.dec = append(v.dec, s[i])
			}
			out = append(out, v)
		}
	}
	return out
}

// jsonView undoes JSON string escapes (\n, \/, \u0026, surrogate pairs)
// wherever they are, inside a string literal or not, so that no way of
// quoting hides a secret.
func jsonView(s string) *view {
	if !strings.Contains(s, `\`) {
		return nil
	}
	v := newView(len(s))
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			i = v.plain(s, i, "\\")
			continue
		}
		if i+1 >= len(s) {
			v.dec = append(v.dec, s[i])
			i++
			continue
		}
		if c, ok := jsonEscapes[s[i+1]]; ok {
			v.escaped([]byte{c}, i, i+2)
			i += 2
			continue
		}
		r1, ok := hex4(s, i)
		if !ok {
			v.dec = append(v.dec, s[i])
			i++
			continue
		}
		end := i + 6
		if utf16.IsSurrogate(r1) {
			if r2, ok := hex4(s, end); ok {
				if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
					r1, end = r, end+6
				}
			}
		}
		n := utf8.EncodeRune(buf[:], r1)
		v.escaped(buf[:n], i, end)
		i = end
	}
	return v
}

// jsonEscapes are JSON's one-letter escapes and the bytes they stand for.
var jsonEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads \uXXXX at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	var b [2]byte
	if _, err := hex.Decode(b[:], []byte(s[i+2:i+6])); err != nil {
		return 0, false
	}
	return rune(b[0])<<8 | rune(b[1]), true
}

// percentView undoes %XX escapes, in either case.
func percentView(s string) *view {
	if !strings.Contains(s, "%") {
		return nil
	}
	v := newView(len(s))
	for i := 0; i < len(s); {
		if s[i] != '%' {
			i = v.plain(s, i, "%")
			continue
		}
		if i+3 <= len(s) {
			var b [1]byte
			if _, err := hex.Decode(b[:], []byte(s[i+1:i+3])); err == nil {
				v.escaped(b[:], i, i+3)
				i += 3
				continue
			}
		}
		v.dec = append(v.dec, s[i])
		i++
	}
	return v
}

// entityView undoes HTML character references (&amp;, &#75;, &#x4b;).
func entityView(s string) *view {
	if !strings.Contains(s, "&") {
		return nil
	}
	v := newView(len(s))
	for i := 0; i < len(s); {
		if s[i] != '&' {
			i = v.plain(s, i, "&")
			continue
		}
		if end, ok := v.entity(s, i); ok {
			i = end
			continue
		}
		v.dec = append(v.dec, s[i])
		i++
	}
	return v
}

// plain appends the bytes of s from i up to the next of the bytes in
// special, which start an escape, and returns where it stopped.
func (v *view) plain(s string, i int, special string) int {
	j := strings.IndexAny(s[i:], special)
	if j < 0 {
		j = len(s) - i
	}
	v.dec = append(v.dec, s[i:i+j]...)
	return i + j
}

// entity decodes the character reference at s[i:], if there is one, and
// returns where it ends.
func (v *view) entity(s string, i int) (end int, ok bool) {
	if s[i] != '&' {
		return 0, false
	}
	j := i + 1
	for j < len(s) && j-i < maxEntity && (isAlnum(s[j]) || s[j] == '#') {
		j++
	}
	if j == i+1 || j == i+2 && s[i+1] == '#' {
		return 0, false // no name or number
	}
	if j < len(s) && s[j] == ';' {
		j++
	}
	dec := html.UnescapeString(s[i:j])
	if dec == s[i:j] {
		return 0, false
	}
	v.escaped([]byte(dec), i, j)
	return j, true
}

// markupView is the text of s as html.parse and xml.parse join it: tags,
// comments and processing instructions dropped, CDATA sections unwrapped,
// character references decoded. A secret split by markup
// (ab<b></b>cd, <![CDATA[ab]]><![CDATA[cd]]>) is whole in it, and so is
// redacted whole, the markup inside it included.
func markupView(s string) *view {
	if !strings.Contains(s, "<") {
		return nil
	}
	v := newView(len(s))
	noEnd := false // no ">" after the current position: the rest is text
	for i := 0; i < len(s); {
		switch {
		case s[i] != '<':
			if end, ok := v.entity(s, i); ok {
				i = end
				continue
			}
			if s[i] == '&' {
				v.dec = append(v.dec, s[i])
				i++
				continue
			}
			i = v.plain(s, i, "<&")
		case strings.HasPrefix(s[i:], "<![CDATA["):
			end := strings.Index(s[i+9:], "]]>")
			if end < 0 {
				end = len(s) - i - 9
			}
			v.escaped(nil, i, i+9)
			v.dec = append(v.dec, s[i+9:i+9+end]...)
			i += 9 + end
			if i < len(s) {
				v.escaped(nil, i, i+3)
				i += 3
			}
		case strings.HasPrefix(s[i:], "<!--"):
			end := strings.Index(s[i+4:], "-->")
			to := len(s)
			if end >= 0 {
				to = i + 4 + end + 3
			}
			v.escaped(nil, i, to)
			i = to
		case !noEnd && i+1 < len(s) && (isAlnum(s[i+1]) || strings.IndexByte("/!?", s[i+1]) >= 0):
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				noEnd = true
				continue
			}
			v.escaped(nil, i, i+end+1)
			i += end + 1
		default:
			v.dec = append(v.dec, s[i])
			i++
		}
	}
	return v
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
