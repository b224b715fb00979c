package script

import (
	"encoding/base64"
	"encoding/hex"
	"html"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// redacted replaces a credential wherever a script could read it.
const redacted = "[redacted]"

// A redactor finds the Go-set header values in what an application sends
// back, in the forms an echo is likely to take: as they are, JSON-escaped
// (any \u escape), percent-encoded, as HTML entities, base64 (at any
// alignment inside a longer base64 text) and hex.
type redactor struct {
	forms   []string // literal forms of the secrets, lower-cased, longest first
	maxSpan int      // the most bytes of input one match can cover
	// byPrefix holds the forms by their first two bytes, and starts marks
	// those pairs, so that one pass over a text finds every form.
	byPrefix map[uint16][]string
	starts   [1 << 16 / 64]uint64
}

// minSecret is the shortest value redacted: shorter ones would mangle
// ordinary text.
const minSecret = 6

// maxEntity bounds the bytes of one HTML character reference (&#x0004B;).
const maxEntity = 40

func newRedactor(values []string) *redactor {
	seen := map[string]bool{}
	r := &redactor{}
	add := func(f string) {
		if len(f) >= minSecret && !seen[f] {
			seen[f] = true
			r.forms = append(r.forms, f)
		}
	}
	var secrets []string
	for _, v := range values {
		secrets = append(secrets, v)
		if scheme, tok, ok := strings.Cut(v, " "); ok {
			tok = strings.TrimSpace(tok)
			secrets = append(secrets, tok)
			// Basic credentials are user:password in base64: the decoded
			// pair and the password are secrets too.
			if strings.EqualFold(scheme, "basic") {
				if dec, err := base64.StdEncoding.DecodeString(tok); err == nil {
					secrets = append(secrets, string(dec))
					if _, pass, ok := strings.Cut(string(dec), ":"); ok {
						secrets = append(secrets, pass)
					}
				}
			}
		}
	}
	for _, s := range secrets {
		if len(s) < minSecret {
			continue
		}
		add(s)
		add(url.QueryEscape(s)) // "+" for a space is not undone by the percent view
		add(hex.EncodeToString([]byte(s)))
		add(strings.ToUpper(hex.EncodeToString([]byte(s))))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			add(enc.EncodeToString([]byte(s)))
			// Inside a longer base64 text the secret starts at one of three
			// alignments; the characters made of its bytes alone are the same
			// whatever surrounds it.
			for k := range 3 {
				t := s[(3-k)%3:]
				t = t[:len(t)/3*3]
				if len(t) >= minSecret {
					add(enc.WithPadding(base64.NoPadding).EncodeToString([]byte(t)))
				}
			}
		}
	}
	for i, f := range r.forms {
		r.forms[i] = string(asciiLower([]byte(f)))
	}
	slices.SortFunc(r.forms, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	r.forms = slices.Compact(r.forms)
	r.byPrefix = map[uint16][]string{}
	for _, f := range r.forms {
		r.maxSpan = max(r.maxSpan, len(f)*maxEntity)
		k := pair(f[0], f[1])
		r.byPrefix[k] = append(r.byPrefix[k], f)
		r.starts[k/64] |= 1 << (k % 64)
	}
	return r
}

func pair(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// span is a range of input bytes to redact.
type span struct{ start, end int }

// A view is the input with one kind of escape undone: dec holds the decoded
// bytes, lower-cased, and esc the escapes decoded, in order; the bytes
// between escapes are the input's own.
type view struct {
	dec []byte
	esc []escape
}

// An escape is dec[at:at+n], decoded from input[from:to].
type escape struct{ at, n, from, to int }

// input returns the range of input bytes decoded byte d came from.
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

// spans returns the ranges of s that hold a secret in any form, in any
// ASCII case (an echo may change it), sorted and merged.
func (r *redactor) spans(s string) []span {
	if len(r.forms) == 0 {
		return nil
	}
	var out []span
	for n, v := range []*view{{dec: []byte(s)}, jsonView(s), percentView(s), entityView(s)} {
		if n > 0 && (v == nil || len(v.esc) == 0) {
			continue // nothing decoded: the same text as the first
		}
		dec := asciiLower(v.dec)
		for i := 0; i+minSecret <= len(dec); i++ {
			k := pair(dec[i], dec[i+1])
			if r.starts[k/64]&(1<<(k%64)) == 0 {
				continue
			}
			for _, f := range r.byPrefix[k] {
				if len(dec)-i >= len(f) && string(dec[i:i+len(f)]) == f {
					from, _ := v.input(i)
					_, to := v.input(i + len(f) - 1)
					out = append(out, span{from, to})
				}
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	merged := out[:1]
	for _, sp := range out[1:] {
		last := &merged[len(merged)-1]
		if sp.start <= last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// asciiLower lower-cases the ASCII letters of b in place, keeping every
// byte where it is.
func asciiLower(b []byte) []byte {
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// redact returns s with every secret replaced by [redacted].
func (r *redactor) redact(s string) string { return apply(s, r.spans(s)) }

// apply replaces the spans of s that lie inside s by [redacted].
func apply(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp.end > len(s) {
			break
		}
		b.WriteString(s[at:sp.start])
		b.WriteString(redacted)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// cut returns the first n bytes of s, or fewer so as not to split a
// character or a secret, with its secrets redacted. spans are s's.
func cut(s string, n int, spans []span) string {
	for i := 0; i < utf8.UTFMax-1 && n > 0 && n < len(s) && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	for _, sp := range spans {
		if sp.start < n && sp.end > n {
			n = sp.start
		}
	}
	return apply(s[:n], spans)
}

func newView(capacity int) *view { return &view{dec: make([]byte, 0, capacity)} }

// escaped appends the bytes b decoded from input[from:to].
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

// entityView undoes HTML character references (&amp;, &#75;, &#x4b;).
func entityView(s string) *view {
	if !strings.Contains(s, "&") {
		return nil
	}
	v := newView(len(s))
	for i := 0; i < len(s); {
		if s[i] == '&' {
			j := i + 1
			for j < len(s) && j-i < maxEntity && (isAlnum(s[j]) || s[j] == '#') {
				j++
			}
			if j < len(s) && s[j] == ';' {
				j++
			}
			if dec := html.UnescapeString(s[i:j]); dec != s[i:j] {
				v.escaped([]byte(dec), i, j)
				i = j
				continue
			}
		}
		v.dec = append(v.dec, s[i])
		i++
	}
	return v
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
