package script

import (
	"unicode/utf8"

	"github.com/onionkit/onion/internal/redact"
)

// redacted replaces a credential wherever a script could read it.
const redacted = redact.Mark

// minSecret is the shortest secret redacted: shorter ones would mangle
// ordinary text. A script's credentials are few and known, so it is
// lower than redact.MinSecret, which guesses at them.
const minSecret = 6

// A redactor finds the Go-set secrets (header values, query parameters) and
// their parts (redact.Parts) in what an application sends back, in every
// form and view internal/redact knows, those a parser makes included:
// a script reads text through html.parse, xml.parse and json.decode.
type redactor struct{ r *redact.Redactor }

// newRedactor finds the values, their parts and runs of them; and the plain
// values (headers that describe the request, such as Accept, rather than
// authorise it) only whole, since runs of them are ordinary text
// ("application/").
func newRedactor(values []string, plain ...string) *redactor {
	var secrets []string
	for _, v := range values {
		secrets = append(secrets, redact.Parts(v)...)
	}
	return &redactor{redact.Config{
		Secrets:    secrets,
		Whole:      plain,
		MinSecret:  minSecret,
		Markup:     true,
		TrimQuotes: true,
	}.New()}
}

// empty reports whether r has nothing to find.
func (r *redactor) empty() bool { return r == nil || r.r.Empty() }

// spans returns the ranges of s that hold a secret, sorted and merged.
func (r *redactor) spans(s string) []redact.Span {
	if r.empty() {
		return nil
	}
	return r.r.Spans(s)
}

// maxSpan is the most bytes of input one match can cover.
func (r *redactor) maxSpan() int { return r.r.MaxSpan() }

// redact returns s with every secret replaced by [redacted].
func (r *redactor) redact(s string) string { return redact.Apply(s, r.spans(s)) }

// redacted is redact, and whether s held a secret.
func (r *redactor) redacted(s string) (string, bool) {
	sp := r.spans(s)
	return redact.Apply(s, sp), len(sp) > 0
}

// cut returns the first n bytes of s, or fewer so as not to split a
// character or a secret, with its secrets redacted. spans are s's.
func cut(s string, n int, spans []redact.Span) string {
	for i := 0; i < utf8.UTFMax-1 && n > 0 && n < len(s) && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	for _, sp := range spans {
		if sp.Start < n && sp.End > n {
			n = sp.Start
		}
	}
	return redact.Apply(s[:n], spans)
}
