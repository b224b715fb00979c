package redact

import (
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A view is a text with one kind of escape undone: dec holds the decoded
// bytes and esc the escapes decoded, in order; the bytes between escapes
// are the text's own.
type view struct {
	dec []byte
	esc []escape
}

// An escape is dec[at:at+n], decoded from text[from:to].
type escape struct{ at, n, from, to int }

// input returns the range of text bytes decoded byte d came from.
func (v *view) input(d int) (from, to int) {
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

// escaped appends the bytes b decoded from text[from:to].
func (v *view) escaped(b []byte, from, to int) {
	v.esc = append(v.esc, escape{len(v.dec), len(b), from, to})
	v.dec = append(v.dec, b...)
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
		if s[i] != '\\' || i+1 >= len(s) {
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
		if s[i] == '%' && i+3 <= len(s) {
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
