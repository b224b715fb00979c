package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// key is a 40-byte API key, as OpenAI's look.
const key = "sk-proj-Zq3xV9mT2bLw8RfK4nYp6HcJ1dGs5AeU"

// leak returns the first form of a Run-byte run of secret that text
// holds in any ASCII case, or "" when it holds none: the run itself, in
// hex, and in base64 (either alphabet) from each alignment.
func leak(text, secret string) string {
	lower := strings.ToLower(text)
	for i := 0; i+Run <= len(secret); i++ {
		w := secret[i : i+Run]
		forms := []string{w, hex.EncodeToString([]byte(w))}
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for k := range 3 {
				t := w[(3-k)%3:]
				forms = append(forms, enc.EncodeToString([]byte(t[:len(t)/3*3])))
			}
		}
		for _, f := range forms {
			if strings.Contains(lower, strings.ToLower(f)) {
				return f
			}
		}
	}
	return ""
}

// percentAll escapes every byte of s.
func percentAll(s string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// unicodeAll escapes every byte of s as JSON's \u00XX.
func unicodeAll(s string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

// shapes are the ways an echo writes key back, inside other text.
func shapes() map[string]string {
	b64 := func(enc *base64.Encoding, pad string) string { return enc.EncodeToString([]byte(pad + key + "!")) }
	return map[string]string{
		"raw":                  key,
		"upper":                strings.ToUpper(key),
		"lower":                strings.ToLower(key),
		"base64 at 0":          b64(base64.StdEncoding, ""),
		"base64 at 1":          b64(base64.StdEncoding, "x"),
		"base64 at 2":          b64(base64.StdEncoding, "xy"),
		"base64url at 1":       b64(base64.URLEncoding, "x"),
		"base64 upper":         strings.ToUpper(b64(base64.StdEncoding, "xy")),
		"hex":                  hex.EncodeToString([]byte(key)),
		"HEX":                  strings.ToUpper(hex.EncodeToString([]byte(key))),
		"truncated 32 of 40":   key[:32],
		"tail 12":              key[28:],
		"percent-escaped":      percentAll(key),
		"query-escaped":        url.QueryEscape(key),
		"json-escaped":         unicodeAll(key),
		"json-escaped, upper":  unicodeAll(strings.ToUpper(key)),
		"percent in a string":  `{"echo":"` + percentAll(key) + `"}`,
		"twice, apart":         key + " and " + key,
		"twice, back to back":  key + key,
		"cut in two, 20 by 20": key[:20] + `","` + key[20:],
	}
}

// TestRedactFindsEveryShape: whatever the shape of the echo, no run of
// Run bytes of the key is left in any form, and the text around it is
// kept.
func TestRedactFindsEveryShape(t *testing.T) {
	r := New("Bearer "+key, key)
	for name, shape := range shapes() {
		text := "before «" + shape + "» after"
		got := r.String(text)
		if f := leak(got, key); f != "" {
			t.Errorf("%s: %q is left in %q", name, f, got)
		}
		if f := leak(decoded(got), key); f != "" {
			t.Errorf("%s: %q is left in %q, decoded", name, f, got)
		}
		if !strings.HasPrefix(got, "before «") || !strings.HasSuffix(got, "» after") || !strings.Contains(got, Mark) {
			t.Errorf("%s: %q", name, got)
		}
	}
}

// decoded is s with JSON and percent escapes undone, where they can be.
func decoded(s string) string {
	var u string
	if json.Unmarshal([]byte(`"`+strings.ReplaceAll(s, `"`, `\"`)+`"`), &u) == nil {
		s = u
	}
	if p, err := url.PathUnescape(s); err == nil {
		s = p
	}
	return s
}

// TestRedactLeavesTheRest: text with no secret in it comes back as it
// was; a secret shorter than MinSecret is none; a text sharing less than
// Run bytes with the key is kept; a span found through an escape covers
// the escape whole, so that a JSON string stays one.
func TestRedactLeavesTheRest(t *testing.T) {
	r := New(key, "short")
	for _, s := range []string{
		"", "a", "short", `{"model":"gpt-4.1","messages":[{"role":"user","content":"sk-proj-"}]}`,
		key[:Run-1] + " " + key[Run:2*Run-1], "%zz\\u00zz\\", strings.Repeat("sk-", 100),
	} {
		if got := r.String(s); got != s {
			t.Errorf("%q became %q", s, got)
		}
	}
	if !New("seven77").Empty() || New().String(key) != key {
		t.Error("a secret under MinSecret bytes is searched for")
	}
	in := `{"a":"x\n` + unicodeAll(key) + `\ty"}`
	got := r.String(in)
	if want := `{"a":"x\n` + Mark + `\ty"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := New("abcdefgh").Spans("ABCDEFGH abcdefghabcdefgh"); !reflect.DeepEqual(got, []Span{{0, 8}, {9, 25}}) {
		t.Errorf("spans %v", got)
	}
}

// TestRedactRepeatedSecret: a text that is the secret over and over, in
// any case, is one span, found in one pass: the spans kept stay few
// however long the text.
func TestRedactRepeatedSecret(t *testing.T) {
	text := strings.Repeat(key+strings.ToUpper(key), 5000)
	if got := New(key).Spans(text); !reflect.DeepEqual(got, []Span{{0, len(text)}}) {
		t.Errorf("%d spans, the first %v", len(got), got[:min(len(got), 3)])
	}
}

// TestCredentialName: the names the brief of a recording lists, and the
// heuristic's, carry a credential; ordinary ones do not.
func TestCredentialName(t *testing.T) {
	for _, n := range []string{
		"key", "api_key", "api-key", "apikey", "API_KEY", "access_token", "token", "subscription-key",
		"client_secret", "password", "code", "sig", "signature", "X-Amz-Signature", "X-Amz-Credential",
		"x-amz-security-token", "X-Amz-Date", "Authorization", "Proxy-Authorization", "Cookie",
		"X-Api-Key", "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "refresh.token", "sessionid", "passwd",
	} {
		if !CredentialName(n) {
			t.Errorf("%q carries no credential, says CredentialName", n)
		}
	}
	for _, n := range []string{"model", "api-version", "alt", "stream", "Content-Type", "User-Agent", "Accept", "q", "limit", "OpenAI-Organization", "codec"} {
		if CredentialName(n) {
			t.Errorf("%q carries a credential, says CredentialName", n)
		}
	}
}

// TestCredentials: what a credential header's value holds.
func TestCredentials(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("user:hunter22-pass"))
	for _, c := range []struct {
		name, value string
		want        []string
	}{
		{"Authorization", "Bearer " + key, []string{"Bearer " + key, key}},
		{"Authorization", "Basic " + basic, []string{"Basic " + basic, basic, "user:hunter22-pass", "hunter22-pass"}},
		{"X-Api-Key", key, []string{key}},
		{"Cookie", "a=1; session=" + key, []string{"1", key, "a=1; session=" + key}},
		{"X-Api-Key", "  ", nil},
	} {
		if got := Credentials(c.name, c.value); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %s: got %q, want %q", c.name, c.value, got, c.want)
		}
	}
}

// FuzzRedact: whatever the secret and the text, Spans are sorted, apart
// and inside the text, and the secret put anywhere in the text, as it is
// or upper-cased, is not left in it.
func FuzzRedact(f *testing.F) {
	for _, s := range shapes() {
		f.Add(key, "before «"+s+"» after", 3)
	}
	f.Add("abcdefgh", `\u0061bcdefgh%61`, 0)
	f.Add("%%%%%%%%", `\\\\\\\\`, 4)
	f.Add("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", "é", 1)
	f.Fuzz(func(t *testing.T, secret, text string, at int) {
		r := New(secret)
		end := -1
		for _, sp := range r.Spans(text) {
			if sp.Start <= end || sp.Start >= sp.End || sp.End > len(text) {
				t.Fatalf("span %v after %d in %d bytes", sp, end, len(text))
			}
			end = sp.End
		}
		lower := func(s string) string { return string(asciiLower([]byte(s))) }
		if len(secret) < MinSecret || strings.ContainsAny(secret, "[]") || strings.Contains(Mark, lower(secret)) {
			return // no secret, or one the mark itself could spell
		}
		at = min(max(at, 0), len(text))
		upper := []byte(secret)
		for i, c := range upper {
			if c >= 'a' && c <= 'z' {
				upper[i] = c - 'a' + 'A'
			}
		}
		for _, s := range []string{secret, string(upper)} {
			got := r.String(text[:at] + s + text[at:])
			if strings.Contains(lower(got), lower(secret)) {
				t.Fatalf("%q is left in %q", secret, got)
			}
		}
	})
}

// BenchmarkRedact: a MiB of JSON text with a key in it, searched for
// three keys.
func BenchmarkRedact(b *testing.B) {
	text := strings.Repeat(`{"role":"assistant","content":"It is sunny in Paris, \u00e9t\u00e9 100%."},`, 1<<20/80) + key
	r := New(key, "azure-0123456789abcdef", "AIzaSyD-0123456789abcdefghijklmnopqrs")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if r.String(text) == text {
			b.Fatal("the key was not found")
		}
	}
}
