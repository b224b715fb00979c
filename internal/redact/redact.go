// Package redact finds known secrets in text, in the forms an echo of
// them takes, and replaces them by [Mark]. A secret is found as it is, in
// any ASCII case, hex-encoded, base64-encoded (standard or URL alphabet,
// at any alignment inside a longer base64 text), JSON-escaped (any \u
// escape) and percent-encoded, and so is any run of [Run] bytes of it, so
// that a truncated secret is found too. Finding them is one pass over the
// text per view (as it is, JSON escapes undone, percent escapes undone):
// linear in the text's length.
package redact

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
)

// Mark replaces a secret.
const Mark = "[redacted]"

// MinSecret is the length from which a value is searched for: a shorter
// one ("test") is no secret, and replacing it would garble ordinary words.
const MinSecret = 8

// Run is how many bytes of a secret, found together, count as the secret:
// every run of Run bytes of it is searched for, in every form, so that a
// secret cut short (or cut in two, each part at least Run bytes) is
// found. A secret shorter than Run is searched for whole.
const Run = 12

// A Redactor finds the secrets it was made with. It is not changed once
// made: one may be used from many goroutines.
type Redactor struct {
	// windows holds every piece searched for, lower-cased: the runs of
	// each secret and their encodings.
	windows map[string]struct{}
	lengths []int // the lengths of the windows, ascending
	// starts marks the first two bytes of the windows, so that most
	// positions of a text are passed over without a map lookup.
	starts [1 << 16 / 64]uint64
}

// New returns a Redactor of secrets; those shorter than [MinSecret] bytes
// are left out. With none left, it finds nothing.
func New(secrets ...string) *Redactor {
	r := &Redactor{windows: map[string]struct{}{}}
	add := func(w string) {
		w = string(asciiLower([]byte(w))) // as the text is: byte for byte
		if _, ok := r.windows[w]; ok {
			return
		}
		r.windows[w] = struct{}{}
		if !slices.Contains(r.lengths, len(w)) {
			r.lengths = append(r.lengths, len(w))
		}
		k := pair(w[0], w[1])
		r.starts[k/64] |= 1 << (k % 64)
	}
	for _, s := range secrets {
		if len(s) < MinSecret {
			continue
		}
		w := min(len(s), Run)
		for i := 0; i+w <= len(s); i++ {
			add(s[i : i+w])
			add(hex.EncodeToString([]byte(s[i : i+w])))
		}
		// Inside a longer base64 text, a run of the secret starts at one of
		// three alignments; the characters made of its bytes alone are those
		// of the secret encoded from that alignment, four by four.
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for k := range 3 {
				t := s[k:]
				e := enc.EncodeToString([]byte(t[:len(t)/3*3]))
				if len(e) < MinSecret {
					continue
				}
				n := min(len(e), Run)
				for j := 0; j+n <= len(e); j += 4 {
					add(e[j : j+n])
				}
			}
		}
	}
	slices.Sort(r.lengths)
	return r
}

func pair(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// Empty reports whether r finds nothing: it was made with no secret long
// enough.
func (r *Redactor) Empty() bool { return len(r.windows) == 0 }

// A Span is the bytes s[Start:End] of a text, which hold a secret.
type Span struct{ Start, End int }

// Spans returns the ranges of s that hold a secret, sorted, those that
// touch or overlap merged into one. A range found through an escape
// covers the escape whole.
func (r *Redactor) Spans(s string) []Span {
	if r.Empty() || len(s) < r.lengths[0] {
		return nil
	}
	var out []Span
	for n, v := range []*view{{dec: []byte(s)}, jsonView(s), percentView(s)} {
		if n > 0 && (v == nil || len(v.esc) == 0) {
			continue // nothing decoded: the same text as the first
		}
		dec := asciiLower(v.dec)
		// The spans of one view come in order: one that touches the last
		// is merged into it at once, so that a text made of the secret over
		// and over makes one span, not one a byte.
		first := len(out)
		for i := 0; i+r.lengths[0] <= len(dec); i++ {
			k := pair(dec[i], dec[i+1])
			if r.starts[k/64]&(1<<(k%64)) == 0 {
				continue
			}
			for _, l := range r.lengths {
				if i+l > len(dec) {
					break
				}
				if _, ok := r.windows[string(dec[i:i+l])]; ok {
					from, _ := v.input(i)
					_, to := v.input(i + l - 1)
					if n := len(out); n > first && from <= out[n-1].End {
						out[n-1].End = max(out[n-1].End, to)
						continue
					}
					out = append(out, Span{from, to})
				}
			}
		}
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
	return merged
}

// String returns s with every secret replaced by [Mark].
func (r *Redactor) String(s string) string { return Apply(s, r.Spans(s)) }

// Apply returns s with each of spans (sorted, apart, as Spans returns
// them) replaced by [Mark].
func Apply(s string, spans []Span) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.Start])
		b.WriteString(Mark)
		at = sp.End
	}
	b.WriteString(s[at:])
	return b.String()
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
