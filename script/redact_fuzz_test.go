package script

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// FuzzRedact puts a secret, in one of the forms an echo takes, inside
// arbitrary text: after redaction no view of the text (JSON string,
// percent, HTML entities, markup dropped, UTF-16 read as bytes, any case)
// shows 12 bytes of the secret.
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
		strings.ToUpper,
		func(s string) string { return utf16Text(s, false) },
		func(s string) string { return utf16Text(s, true) },
		func(s string) string { return splitText(s, "", "<b></b>", "") },
		func(s string) string { return splitText(s, "<![CDATA[", "]]><![CDATA[", "]]>") },
		func(s string) string { return splitText(s, "", `\u003cb\u003e\u003c/b\u003e`, "") },
		func(s string) string { return s[3:15] },
		func(s string) string { return base64.StdEncoding.EncodeToString([]byte("x" + s)) },
		func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte("xy" + s)) },
		func(s string) string { return hex.EncodeToString([]byte(s)) },
	}
	f.Add("", "", uint8(0))
	f.Add(`{"key": "`, `"}`, uint8(1))
	f.Add(`\`, `\u00`, uint8(2))
	f.Add("%", "%4", uint8(3))
	f.Add("&#", ";", uint8(6))
	f.Add("x", "y", uint8(7))
	f.Add("<p>", "</p>", uint8(8))
	f.Add("\x00a\x00", "\x00", uint8(9))
	f.Add("a\x00", "\x00", uint8(10))
	f.Add("<p title='", "'>", uint8(11))
	f.Add("<r>", "<![CDATA[", uint8(12))
	f.Add(`{"h": "`, `\u003c/p\u003e"}`, uint8(13))
	f.Add("<", "-->", uint8(14))
	f.Add("abc", "def", uint8(15))
	f.Add("QUJD", "==", uint8(16))
	f.Add("0x", "", uint8(17))
	r := newRedactor([]string{"Bearer " + secret})
	f.Fuzz(func(t *testing.T, prefix, suffix string, form uint8) {
		if strings.Contains(prefix+suffix, secret[:4]) {
			return // the text itself already spells part of the secret
		}
		in := prefix + forms[int(form)%len(forms)](secret) + suffix
		out := r.redact(in)
		views := []string{out, html.UnescapeString(out), strings.ReplaceAll(out, "\x00", ""), html.UnescapeString(fuzzMarkup.ReplaceAllString(out, ""))}
		if s, err := url.PathUnescape(out); err == nil {
			views = append(views, s)
		}
		var s string
		if err := json.Unmarshal([]byte(`"`+out+`"`), &s); err == nil {
			views = append(views, s, html.UnescapeString(fuzzMarkup.ReplaceAllString(s, "")))
		}
		low := strings.ToLower(secret)
		for _, v := range views {
			v = strings.ToLower(v)
			for i := 0; i+12 <= len(low); i++ {
				if strings.Contains(v, low[i:i+12]) {
					t.Fatalf("redact(%q) = %q still holds 12 bytes of the secret (%q)", in, out, v)
				}
			}
			if strings.Contains(v, strings.ToLower(base64.StdEncoding.EncodeToString([]byte(secret)))) {
				t.Fatalf("redact(%q) = %q still holds the secret in base64 (%q)", in, out, v)
			}
		}
	})
}

// fuzzMarkup matches what html.parse and xml.parse drop of a text.
var fuzzMarkup = regexp.MustCompile(`<!--.*?-->|<!\[CDATA\[|\]\]>|<[a-zA-Z/!?][^>]*>`)

func splitText(s, open, sep, end string) string {
	var parts []string
	for i := 0; i < len(s); i += 4 {
		parts = append(parts, s[i:min(i+4, len(s))])
	}
	return open + strings.Join(parts, sep) + end
}

func utf16Text(s string, bigEndian bool) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if bigEndian {
			b.WriteByte(0)
		}
		b.WriteByte(c)
		if !bigEndian {
			b.WriteByte(0)
		}
	}
	return b.String()
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
