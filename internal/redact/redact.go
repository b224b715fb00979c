// Package redact finds known secrets in text, in the forms an echo of
// them takes, and replaces them by [Mark]. A secret is found as it is, in
// any ASCII case, with "+" for a space, hex-encoded, base64-encoded
// (standard or URL alphabet, padded or not, at any alignment inside a
// longer base64 text), JSON-escaped (any \u escape) and percent-encoded,
// and so is any run of [Run] bytes of any of these forms, so that a
// truncated secret is found too. [Config] adds the views a parser's
// reading of the text makes (HTML character references, markup, UTF-16),
// values found only whole, and a shorter least secret. Finding them is one
// pass over the text per view: linear in the text's length.
package redact

import (
	"encoding/base64"
	"encoding/hex"
	mathbits "math/bits"
	"net/url"
	"slices"
	"strings"
)

// Mark replaces a secret.
const Mark = "[redacted]"

// MinSecret is the length from which a value is searched for: a shorter
// one ("test") is no secret, and replacing it would garble ordinary words.
const MinSecret = 8

// Run is how many bytes of a secret's form, found together, count as the
// secret: every run of Run bytes of it is searched for, so that a secret
// cut short (or cut in two, each part at least Run bytes) is found. A form
// shorter than Run is searched for whole.
const Run = 12

// maxEntity bounds the bytes of one HTML character reference (&#x0004B;).
const maxEntity = 40

// fib spreads a prefix over the filter's bits (Fibonacci hashing).
const fib = 0x9E3779B9

// A Config says what a [Redactor] finds, for callers that need more than
// [New] gives.
type Config struct {
	// Secrets are found as New finds them: every form of each, whole and
	// by any run of Run bytes.
	Secrets []string
	// Whole are found only whole, in every form, never by a run: values
	// such as an Accept header's, whose runs are ordinary text
	// ("application/"). A value both here and in Secrets is found whole.
	Whole []string
	// MinSecret is the shortest secret, and form of one, searched for;
	// 0 stands for [MinSecret].
	MinSecret int
	// Markup searches views of the text a parser makes besides the JSON
	// and percent ones: HTML character references undone, markup dropped
	// (tags, comments and processing instructions; CDATA unwrapped), UTF-16
	// read a byte in two, and a JSON string's text with percent escapes,
	// character references and markup undone.
	Markup bool
	// TrimQuotes leaves the quotes at the edges of a span out of it, so
	// that an echo of a quoted part (token="T") in JSON stays JSON.
	TrimQuotes bool
}

// A Redactor finds the secrets it was made with. It is not changed once
// made: one may be used from many goroutines.
type Redactor struct {
	// windows holds every Run-byte run of the long forms, lower-cased;
	// filter marks the four-byte prefixes of those runs (hashed), so that
	// one pass over a text looks few of its positions up.
	windows map[[Run]byte]struct{}
	filter  []uint64
	shift   uint // filter index: the top bits of prefix*fib
	// short holds the forms shorter than Run and those of the values found
	// whole, lower-cased: byPrefix by their first two bytes, and starts
	// marks those pairs.
	short    []string
	byPrefix map[uint16][]string
	starts   [1 << 16 / 64]uint64
	least    int // the shortest secret or form searched for
	maxSpan  int // the most bytes of input one match can cover
	markup   bool
	trim     bool
}

// New returns a Redactor of secrets; those shorter than [MinSecret] bytes
// are left out. With none left, it finds nothing.
func New(secrets ...string) *Redactor { return Config{Secrets: secrets}.New() }

// New returns a Redactor of c's secrets and whole values; those shorter
// than c.MinSecret bytes are left out.
func (c Config) New() *Redactor {
	r := &Redactor{
		windows: map[[Run]byte]struct{}{},
		least:   c.MinSecret,
		markup:  c.Markup,
		trim:    c.TrimQuotes,
	}
	if r.least <= 0 {
		r.least = MinSecret
	}
	r.least = max(r.least, 2) // a form is filed by its first two bytes
	seen := map[string]bool{}
	var long []string
	each := func(values []string, whole bool) {
		for _, v := range values {
			for _, f := range r.forms(v) {
				if len(f) < r.least || seen[f] {
					continue
				}
				seen[f] = true
				if whole || len(f) < Run {
					r.short = append(r.short, f)
				} else {
					long = append(long, f)
				}
			}
		}
	}
	each(c.Whole, true)
	each(c.Secrets, false)
	for _, f := range long {
		for i := 0; i+Run <= len(f); i++ {
			r.windows[[Run]byte([]byte(f[i:]))] = struct{}{}
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
	r.maxSpan = Run * maxEntity
	for _, f := range r.short {
		r.maxSpan = max(r.maxSpan, len(f)*maxEntity)
		k := pair(f[0], f[1])
		r.byPrefix[k] = append(r.byPrefix[k], f)
		r.starts[k/64] |= 1 << (k % 64)
	}
	return r
}

// forms returns the encodings of s an echo may take that no view undoes,
// lower-cased: s itself, "+" for a space, hex and base64. Inside a longer
// base64 text s starts at one of three alignments; the characters made of
// its bytes alone are the same whatever surrounds it.
func (r *Redactor) forms(s string) []string {
	if len(s) < r.least {
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
	for i, f := range out {
		out[i] = string(asciiLower([]byte(f)))
		// Text lower-cased as Unicode lower-cases it (é for É) holds this
		// form instead: search for both.
		if u := strings.ToLower(f); u != out[i] {
			out = append(out, u)
		}
	}
	return out
}

// slot is a four-byte prefix's bit in the filter.
func (r *Redactor) slot(prefix uint32) uint32 { return prefix * fib >> r.shift }

func pair(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// Empty reports whether r finds nothing: it was made with no secret long
// enough. A nil Redactor finds nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.windows) == 0 && len(r.short) == 0 }

// MaxSpan is the most bytes of text one match can cover (a short form
// written as character references): a caller that cuts a text short reads
// this many bytes past the cut, so that a secret across it is found.
func (r *Redactor) MaxSpan() int { return r.maxSpan }

// find calls emit(at, n) for each run of s, in any ASCII case, that is a
// window of a long form or a whole short form. It makes one pass over s
// for the windows and one for the short forms.
func find[T ~string | ~[]byte](r *Redactor, s T, emit func(at, n int)) {
	if len(r.windows) > 0 && len(s) >= Run {
		var prefix uint32
		for i := range len(s) - Run + 4 {
			prefix = prefix<<8 | uint32(lower(s[i]))
			if i < 3 {
				continue
			}
			if h := r.slot(prefix); r.filter[h/64]&(1<<(h%64)) == 0 {
				continue
			}
			at := i - 3
			var k [Run]byte
			for j := range k {
				k[j] = lower(s[at+j])
			}
			if _, ok := r.windows[k]; ok {
				emit(at, Run)
			}
		}
	}
	if len(r.short) == 0 {
		return
	}
	for i := 0; i+r.least <= len(s); i++ {
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

// A Span is the bytes s[Start:End] of a text, which hold a secret.
type Span struct{ Start, End int }

// Spans returns the ranges of s that hold a secret in any form, sorted,
// those that touch or overlap merged into one. A range found through an
// escape covers the escape whole. The work is linear in len(s): one pass
// for s and one for each view that has anything to undo.
func (r *Redactor) Spans(s string) []Span {
	if r.Empty() || len(s) < r.least {
		return nil
	}
	var out []Span
	// The spans of one view come in order: one that touches the last is
	// merged into it at once, so that a text made of the secret over and
	// over makes one span, not one a byte.
	add := func(sp Span) {
		if n := len(out); n > 0 && sp.Start >= out[n-1].Start && sp.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, sp.End)
			return
		}
		out = append(out, sp)
	}
	find(r, s, func(at, n int) { add(Span{at, at + n}) })
	for _, v := range views(s, r.markup) {
		find(r, v.dec, func(at, n int) {
			from, _ := v.input(at)
			_, to := v.input(at + n - 1)
			add(Span{from, to})
		})
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortFunc(out, func(a, b Span) int { return a.Start - b.Start })
	merged := out[:1]
	for _, sp := range out[1:] {
		last := &merged[len(merged)-1]
		if sp.Start <= last.End {
			last.End = max(last.End, sp.End)
			continue
		}
		merged = append(merged, sp)
	}
	if r.trim {
		for i := range merged {
			sp := &merged[i]
			for sp.End-sp.Start > 1 && strings.IndexByte(quotes, s[sp.Start]) >= 0 {
				sp.Start++
			}
			for sp.End-sp.Start > 1 && strings.IndexByte(quotes, s[sp.End-1]) >= 0 {
				sp.End--
			}
		}
	}
	return merged
}

// quotes are those TrimQuotes leaves out of a span.
const quotes = `"'`

// String returns s with every secret replaced by [Mark].
func (r *Redactor) String(s string) string { return Apply(s, r.Spans(s)) }

// Apply returns s with each of spans (sorted, apart, as Spans returns
// them) replaced by [Mark]. It stops at the first span that does not end
// inside s, so that the spans of a text apply to a prefix of it.
func Apply(s string, spans []Span) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range spans {
		if sp.End > len(s) {
			break
		}
		b.WriteString(s[at:sp.Start])
		b.WriteString(Mark)
		at = sp.End
	}
	b.WriteString(s[at:])
	return b.String()
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiLower lower-cases the ASCII letters of b in place, keeping every
// byte where it is.
func asciiLower(b []byte) []byte {
	for i, c := range b {
		b[i] = lower(c)
	}
	return b
}
