package script

import (
	"encoding/base64"
	"encoding/hex"
	mathbits "math/bits"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// redacted replaces a credential wherever a script could read it.
const redacted = "[redacted]"

// A redactor finds the Go-set secrets (header values, query parameters) and
// their parts in what an application sends back: any run of window or more
// bytes of one, or a whole short one, in any ASCII case, as it is, as hex or
// base64 (at any alignment inside a longer base64 text, either alphabet),
// and through the views that undo an escape or a joining (redact_views.go):
// JSON escapes, percent-encoding, HTML character references, markup that
// splits a text, UTF-16.
type redactor struct {
	// windows holds every window-byte run of the long forms, lower-cased;
	// filter marks the four-byte prefixes of those runs (hashed), so that
	// one pass over a text looks few of its positions up.
	windows map[[window]byte]struct{}
	filter  []uint64
	shift   uint // filter index: the top bits of prefix*fib
	// short holds the forms shorter than window and those of plain values,
	// lower-cased, matched whole:
	// byPrefix by their first two bytes, and starts marks those pairs.
	short    []string
	byPrefix map[uint16][]string
	starts   [1 << 16 / 64]uint64
	maxSpan  int // the most bytes of input one match can cover
}

// window is the shortest run of a secret's bytes redacted on its own,
// wherever it is: an echo of part of a secret (a truncated one, each piece
// of a split one) is redacted once it holds this many bytes of it. Shorter
// runs are left, as ordinary text holds them by chance.
const window = 12

// minSecret is the shortest secret redacted: shorter ones would mangle
// ordinary text.
const minSecret = 6

// maxEntity bounds the bytes of one HTML character reference (&#x0004B;).
const maxEntity = 40

// fib spreads a prefix over the filter's bits (Fibonacci hashing).
const fib = 0x9E3779B9

// newRedactor finds the values, their parts and runs of them; and the plain
// values (headers that describe the request, such as Accept, rather than
// authorise it) only whole, since runs of them are ordinary text
// ("application/").
func newRedactor(values []string, plain ...string) *redactor {
	r := &redactor{windows: map[[window]byte]struct{}{}}
	seen := map[string]bool{}
	for _, v := range plain {
		for _, f := range formsOf(v) {
			if f = strings.ToLower(f); len(f) >= minSecret && !seen[f] {
				seen[f] = true
				r.short = append(r.short, f)
			}
		}
	}
	var long []string
	for _, v := range values {
		for _, s := range secretsOf(v) {
			for _, f := range formsOf(s) {
				f = strings.ToLower(f)
				if len(f) < minSecret || seen[f] {
					continue
				}
				seen[f] = true
				if len(f) >= window {
					long = append(long, f)
				} else {
					r.short = append(r.short, f)
				}
			}
		}
	}
	for _, f := range long {
		for i := 0; i+window <= len(f); i++ {
			r.windows[[window]byte([]byte(f[i:]))] = struct{}{}
		}
	}
	bits := 1 << 12
	for bits < 16*len(r.windows) && bits < 1<<24 {
		bits <<= 1
	}
	r.filter = make([]uint64, bits/64)
	r.shift = uint(32 - mathbits.TrailingZeros(uint(bits)))
	for k := range r.windows {
		h := r.slot(uint32(k[0])<<24 | uint32(k[1])<<16 | uint32(k[2])<<8 | uint32(k[3]))
		r.filter[h/64] |= 1 << (h % 64)
	}
	slices.Sort(r.short)
	r.byPrefix = map[uint16][]string{}
	r.maxSpan = window * maxEntity
	for _, f := range r.short {
		r.maxSpan = max(r.maxSpan, len(f)*maxEntity)
		k := pair(f[0], f[1])
		r.byPrefix[k] = append(r.byPrefix[k], f)
		r.starts[k/64] |= 1 << (k % 64)
	}
	return r
}

// slot is a four-byte prefix's bit in the filter.
func (r *redactor) slot(prefix uint32) uint32 { return prefix * fib >> r.shift }

// secretsOf returns v and the parts of it an application may echo on their
// own: the token after an auth scheme ("Bearer T"), Basic's user:password
// and password, and the value of each name=value parameter (a cookie's,
// Token token="T"), unquoted and percent-decoded, as an application parses
// them back.
func secretsOf(v string) []string {
	out := []string{v}
	rest := v
	if scheme, tok, ok := strings.Cut(v, " "); ok && !strings.ContainsAny(scheme, "=;,\"") {
		tok = strings.TrimSpace(tok)
		out = append(out, tok)
		rest = tok
		if strings.EqualFold(scheme, "basic") {
			dec, err := base64.StdEncoding.DecodeString(tok)
			if err != nil {
				dec, err = base64.RawStdEncoding.DecodeString(tok)
			}
			if err == nil {
				out = append(out, string(dec))
				if _, pass, ok := strings.Cut(string(dec), ":"); ok {
					out = append(out, pass)
				}
			}
		}
	}
	for _, p := range strings.FieldsFunc(rest, func(r rune) bool { return r == ';' || r == ',' }) {
		_, val, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		if u, err := strconv.Unquote(val); err == nil && strings.HasPrefix(val, `"`) {
			val = u
		} else {
			val = strings.Trim(val, `"`)
		}
		out = append(out, val)
		if u, err := url.QueryUnescape(val); err == nil && u != val {
			out = append(out, u)
		}
		if u, err := url.PathUnescape(val); err == nil && u != val {
			out = append(out, u)
		}
	}
	return out
}

// formsOf returns the encodings of s an echo may take that no view undoes:
// s itself, "+" for a space, hex and base64. Inside a longer base64 text s
// starts at one of three alignments; the characters made of its bytes alone
// are the same whatever surrounds it.
func formsOf(s string) []string {
	if len(s) < minSecret {
		return nil
	}
	out := []string{s, url.QueryEscape(s), hex.EncodeToString([]byte(s))}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString([]byte(s)))
		for k := range 3 {
			t := s[min(k, len(s)):]
			out = append(out, enc.WithPadding(base64.NoPadding).EncodeToString([]byte(t[:len(t)/3*3])))
		}
	}
	return out
}

func pair(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// find calls emit(at, n) for each run of s, in any ASCII case, that is a
// window of a long form or a whole short form. It makes one pass over s
// for the windows and one for the short forms.
func find[T ~string | ~[]byte](r *redactor, s T, emit func(at, n int)) {
	if len(r.windows) > 0 && len(s) >= window {
		var prefix uint32
		for i := range len(s) - window + 4 {
			prefix = prefix<<8 | uint32(lower(s[i]))
			if i < 3 {
				continue
			}
			if h := r.slot(prefix); r.filter[h/64]&(1<<(h%64)) == 0 {
				continue
			}
			at := i - 3
			var k [window]byte
			for j := range k {
				k[j] = lower(s[at+j])
			}
			if _, ok := r.windows[k]; ok {
				emit(at, window)
			}
		}
	}
	if len(r.short) == 0 {
		return
	}
	for i := 0; i+minSecret <= len(s); i++ {
		k := pair(lower(s[i]), lower(s[i+1]))
		if r.starts[k/64]&(1<<(k%64)) == 0 {
			continue
		}
		for _, f := range r.byPrefix[k] {
			if len(s)-i >= len(f) && equalLower(s[i:i+len(f)], f) {
				emit(i, len(f))
			}
		}
	}
}

// equalLower reports whether s, lower-cased, is f.
func equalLower[T ~string | ~[]byte](s T, f string) bool {
	for i := range len(f) {
		if lower(s[i]) != f[i] {
			return false
		}
	}
	return true
}

// span is a range of input bytes to redact.
type span struct{ start, end int }

// spans returns the ranges of s that hold a secret in any form, sorted and
// merged. The work is linear in len(s): one pass for s and one for each
// view that has anything to undo.
func (r *redactor) spans(s string) []span {
	if r.empty() || len(s) < minSecret {
		return nil
	}
	var out []span
	add := func(sp span) {
		if n := len(out); n > 0 && sp.start >= out[n-1].start && sp.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, sp.end)
			return
		}
		out = append(out, sp)
	}
	find(r, s, func(at, n int) { add(span{at, at + n}) })
	for _, v := range views(s) {
		find(r, v.dec, func(at, n int) {
			from, _ := v.input(at)
			_, to := v.input(at + n - 1)
			add(span{from, to})
		})
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
	// A run of a header value may take in the quote around a part of it
	// (token="T"): leave it, so that an echo in JSON stays JSON.
	for i := range merged {
		sp := &merged[i]
		for sp.end-sp.start > 1 && strings.IndexByte(around, s[sp.start]) >= 0 {
			sp.start++
		}
		for sp.end-sp.start > 1 && strings.IndexByte(around, s[sp.end-1]) >= 0 {
			sp.end--
		}
	}
	return merged
}

// around are the quotes around the parts of a header value.
const around = `"'`

// empty reports whether r has nothing to find.
func (r *redactor) empty() bool { return r == nil || len(r.windows) == 0 && len(r.short) == 0 }

// redact returns s with every secret replaced by [redacted].
func (r *redactor) redact(s string) string { return apply(s, r.spans(s)) }

// redacted is redact, and whether s held a secret.
func (r *redactor) redacted(s string) (string, bool) {
	sp := r.spans(s)
	return apply(s, sp), len(sp) > 0
}

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
