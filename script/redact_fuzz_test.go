package script

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"testing"
)

// FuzzRedact puts a secret, in one of the forms an echo takes, inside
// arbitrary text: after redaction no decoding of the text (JSON string,
// percent, HTML entities) shows the secret.
func FuzzRedact(f *testing.F) {
	const secret = "tok-abc&def/ghi+jkl"
	forms := []func(string) string{
		func(s string) string { return s },
		func(s string) string { b, _ := json.Marshal(s); return strings.Trim(string(b), `"`) },
		func(s string) string { return strings.ReplaceAll(s, "t", `\u0074`) },
		url.QueryEscape,
		url.PathEscape,
		html.EscapeString,
		func(s string) string { return strings.ReplaceAll(s, "o", "&#111;") },
		func(s string) string { return strings.ReplaceAll(s, "a", "%61") },
	}
	f.Add("", "", uint8(0))
	f.Add(`{"key": "`, `"}`, uint8(1))
	f.Add(`\`, `\u00`, uint8(2))
	f.Add("%", "%4", uint8(3))
	f.Add("&#", ";", uint8(6))
	f.Add("x", "y", uint8(7))
	r := newRedactor([]string{"Bearer " + secret})
	f.Fuzz(func(t *testing.T, prefix, suffix string, form uint8) {
		if strings.Contains(prefix+suffix, secret[:4]) {
			return // the text itself already spells part of the secret
		}
		in := prefix + forms[int(form)%len(forms)](secret) + suffix
		out := r.redact(in)
		views := []string{out, html.UnescapeString(out)}
		if s, err := url.PathUnescape(out); err == nil {
			views = append(views, s)
		}
		var s string
		if err := json.Unmarshal([]byte(`"`+out+`"`), &s); err == nil {
			views = append(views, s)
		}
		for _, v := range views {
			if strings.Contains(v, secret) || strings.Contains(v, base64.StdEncoding.EncodeToString([]byte(secret))) {
				t.Fatalf("redact(%q) = %q still holds the secret (%q)", in, out, v)
			}
		}
	})
}

// BenchmarkRedact redacts a 1 MiB JSON answer (the default
// MaxResponseBytes) that echoes a Bearer token once, JSON-escaped.
func BenchmarkRedact(b *testing.B) {
	const secret = "tok-abc&def/ghi+jkl"
	r := newRedactor([]string{"Bearer " + secret})
	row := `{"id": 1, "title": "Printer on fire \u00e9", "url": "/t/1?a=%20b&amp;c"},`
	body := "[" + strings.Repeat(row, (1<<20)/len(row)) + `{"key": "tok-abc\u0026def\/ghi+jkl"}]`
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if out := r.redact(body); strings.Contains(out, "ghi+jkl") {
			b.Fatal("not redacted")
		}
	}
}
