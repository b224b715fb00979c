package devui

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/onionkit/onion/internal/redact"
)

// This file keeps secrets off the page: every text the page is sent
// passes through the UI's redactor, which knows the values of the
// environment's credentials (OPENAI_API_KEY, ANTHROPIC_API_KEY and any
// other variable whose name says it holds one) and those given with
// Secrets.

// envSecrets are the values of the environment variables whose names say
// they hold a credential (redact.CredentialName), but for the working
// directory (PWD reads as a password's name) and paths (the file of
// GOOGLE_APPLICATION_CREDENTIALS is not the secret, what it holds is):
// replacing them would hide what tools say about files.
func envSecrets() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, value, ok := strings.Cut(kv, "=")
		switch {
		case !ok || !redact.CredentialName(name) || strings.TrimSpace(value) == "":
		case name == "PWD" || name == "OLDPWD" || strings.HasPrefix(value, "/"):
		default:
			out = append(out, value)
		}
	}
	return out
}

// scrubber replaces secrets in what the page is sent.
type scrubber struct{ red *redact.Redactor }

func newScrubber(secrets []string) scrubber {
	return scrubber{red: redact.Config{Secrets: secrets, TrimQuotes: true}.New()}
}

// text is s with every secret replaced by redact.Mark.
func (s scrubber) text(v string) string {
	if s.red.Empty() {
		return v
	}
	return s.red.String(v)
}

// json is data, a JSON document, with every secret replaced, still JSON:
// when replacing cut an escape in two, each string of the document is
// scrubbed on its own instead.
func (s scrubber) json(data []byte) []byte {
	if s.red.Empty() {
		return data
	}
	out := s.red.String(string(data))
	if out == string(data) {
		return data
	}
	if json.Valid([]byte(out)) {
		return []byte(out)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return []byte(`"(not shown: it held a secret)"`)
	}
	b, err := json.Marshal(s.value(v))
	if err != nil {
		return []byte(`"(not shown: it held a secret)"`)
	}
	return b
}

// value scrubs every string of a decoded JSON value, keys included.
func (s scrubber) value(v any) any {
	switch v := v.(type) {
	case string:
		return s.text(v)
	case []any:
		for i := range v {
			v[i] = s.value(v[i])
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[s.text(k)] = s.value(e)
		}
		return out
	}
	return v
}

// holdBack bounds the bytes at the end of a streamed text that wait for
// the next piece before they are shown: a secret's first bytes are found
// only once Run of them are there, and a JSON escape spends up to six
// bytes on one.
const holdBack = 6 * (redact.Run - 1)

// streamScrub scrubs a text that arrives in pieces, such as a model's
// reply, so that a secret split over pieces is not shown either. A
// secret holds no blank, so only the text after the last blank can be
// the start of one not yet found: that word waits (up to holdBack bytes
// of it) for the next piece or the end, and the rest shows at once.
type streamScrub struct {
	s     scrubber
	raw   strings.Builder
	shown int // the bytes of raw already shown, or replaced by a mark
	// marked is set when what was shown last ends with redact.Mark.
	marked bool
}

// add takes the next piece and returns the text that may be shown now;
// final shows the rest.
func (t *streamScrub) add(piece string, final bool) string {
	t.raw.WriteString(piece)
	raw := t.raw.String()
	if t.s.red.Empty() {
		out := raw[t.shown:]
		t.shown = len(raw)
		return out
	}
	limit := len(raw)
	if !final {
		limit -= lastWord(raw)
	}
	if limit <= t.shown {
		return ""
	}
	// Look far enough back that a secret across the last cut is found.
	from := max(0, t.shown-t.s.red.MaxSpan())
	var b strings.Builder
	at := t.shown
	for _, sp := range t.s.red.Spans(raw[from:]) {
		start, end := sp.Start+from, sp.End+from
		if end <= at {
			continue
		}
		if start >= limit {
			break
		}
		b.WriteString(raw[at:max(start, at)])
		if start >= at || !t.marked || b.Len() > 0 {
			b.WriteString(redact.Mark)
		}
		at = end
		limit = max(limit, end)
		t.marked = true
	}
	if at < limit {
		b.WriteString(raw[at:limit])
		t.marked = false
		at = limit
	}
	t.shown = at
	return b.String()
}

// lastWord is how many bytes at the end of s are not blanks, at most
// holdBack.
func lastWord(s string) int {
	n := 0
	for n < holdBack && n < len(s) {
		switch s[len(s)-1-n] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			return n
		}
		n++
	}
	return n
}
