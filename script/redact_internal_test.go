package script

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestRedactorFindsParts echoes the parts of a credential an application
// parses out of it, and runs of it, on their own.
func TestRedactorFindsParts(t *testing.T) {
	const long = "Zq8vT3mK9pL2xR7wN4bY6cH1jF5gD0sA-e_u.iOk"
	for _, tc := range []struct {
		name, value, echo, want string
	}{
		{"short cookie value", "theme=dark; sid=abc12345", "sid is abc12345.", "sid is [redacted]."},
		{"percent-encoded cookie value", "sid=abc%2Fdef%3D%3D", "got abc/def==", "got [redacted]"},
		{"token parameter", `Token token="short1234"`, "t=short1234", "t=[redacted]"},
		{"escaped token parameter", `Token token="sh\"ort1234"`, `t=sh"ort1234`, "t=[redacted]"},
		{"basic password", "Basic " + base64.StdEncoding.EncodeToString([]byte("bot:pa55word")), "pw: pa55word", "pw: [redacted]"},
		{"bearer token", "Bearer " + long, "t=" + long, "t=[redacted]"},
		{"12 bytes from the middle", "Bearer " + long, "t=" + long[10:22] + ".", "t=[redacted]."},
		{"11 bytes are below the bar", "Bearer " + long, "t=" + long[10:21] + ".", "t=" + long[10:21] + "."},
		{"an echo in JSON stays JSON", `Token token="` + long + `"`, `{"t":"` + long + `"}`, `{"t":"[redacted]"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newRedactor([]string{tc.value}).redact(tc.echo); got != tc.want {
				t.Errorf("redact(%q) = %q, want %q", tc.echo, got, tc.want)
			}
		})
	}
}

// TestRedactorPlainValuesWhole redacts a header that describes the request
// (Accept) only where it is echoed whole: runs of it are ordinary text.
func TestRedactorPlainValuesWhole(t *testing.T) {
	r := newRedactor(nil, "application/vnd.github+json")
	for in, want := range map[string]string{
		`{"type": "application/json"}`:             `{"type": "application/json"}`,
		`accept: application/vnd.github+json, */*`: `accept: [redacted], */*`,
	} {
		if got := r.redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactorViewsJoin finds a secret that only decoding or joining makes
// whole, and redacts the input it came from, markup included.
func TestRedactorViewsJoin(t *testing.T) {
	const secret = "Zq8vT3mK9pL2xR7wN4bY"
	r := newRedactor([]string{secret})
	for _, tc := range []struct{ name, in string }{
		{"tags", "a Zq8vT3<b>mK9p</b>L2xR<i></i>7wN4bY b"},
		{"comment", "a Zq8vT3mK<!-- x -->9pL2xR7wN4bY b"},
		{"cdata", "a <![CDATA[Zq8vT3]]><![CDATA[mK9pL2]]>xR7wN4bY b"},
		{"references in text", "a Zq8v&#84;3<b>mK9p</b>L2xR7wN4bY b"},
		{"html in a json string", `{"h": "a Zq8vT3\u003cb\u003emK9pL2xR7wN4bY b"}`},
		{"utf-16le", "a \x00" + strings.Join(strings.Split(secret, ""), "\x00") + "\x00 b"},
		{"utf-16be", "\x00a\x00 \x00" + strings.Join(strings.Split(secret, ""), "\x00") + "\x00 \x00b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.redact(tc.in)
			if !strings.Contains(got, redacted) || strings.Contains(got, "mK9p") || strings.Contains(got, "7wN4") {
				t.Errorf("redact(%q) = %q, want the secret and the markup inside it redacted", tc.in, got)
			}
		})
	}
	if in := "a < b > c <b>x</b> <![CDATA[y]]> <!-- z"; r.redact(in) != in {
		t.Errorf("redact(%q) = %q, want it as it is", in, r.redact(in))
	}
}
