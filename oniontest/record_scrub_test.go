package oniontest_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

// scrubKey is a 40-byte API key, as OpenAI's look.
const scrubKey = "sk-proj-Zq3xV9mT2bLw8RfK4nYp6HcJ1dGs5AeU"

// leakedForm returns the first form of a 12-byte run of secret that text
// holds in any ASCII case, or "" when it holds none: the run itself, in
// hex, and in base64 (either alphabet) from each alignment.
func leakedForm(text, secret string) string {
	lower := strings.ToLower(text)
	for i := 0; i+12 <= len(secret); i++ {
		w := secret[i : i+12]
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

// escapeAll escapes every byte of s with format ("%%%02X", `\u%04x`).
func escapeAll(s, format string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}

// chunks is a chat completion stream whose deltas are parts.
func chunks(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		d, _ := json.Marshal(p)
		fmt.Fprintf(&b, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", d)
	}
	return b.String() + "data: [DONE]\n\n"
}

// echoShapes are the replies of an upstream that writes the key back, by
// the shape the request asks for: JSON bodies with the key in a string,
// and streams with it spread over events.
func echoShapes(key string) map[string]string {
	b64 := func(enc *base64.Encoding, pad string) string {
		return `{"echo":"` + enc.EncodeToString([]byte(pad+key+"!")) + `"}`
	}
	var fours []string
	for i := 0; i < len(key); i += 4 {
		fours = append(fours, key[i:min(i+4, len(key))])
	}
	echo := func(s string) string { return `{"echo":"` + s + `"}` }
	return map[string]string{
		"raw":                    echo(key),
		"upper":                  echo(strings.ToUpper(key)),
		"base64 at 0":            b64(base64.StdEncoding, ""),
		"base64 at 1":            b64(base64.StdEncoding, "x"),
		"base64 at 2":            b64(base64.StdEncoding, "xy"),
		"base64url at 1":         b64(base64.URLEncoding, "x"),
		"hex":                    echo(hex.EncodeToString([]byte(key))),
		"HEX":                    echo(strings.ToUpper(hex.EncodeToString([]byte(key)))),
		"truncated 32 of 40":     `{"error":{"message":"Incorrect API key provided: ` + key[:32] + `..."}}`,
		"url-escaped in JSON":    echo(escapeAll(key, "%%%02X")),
		"json-escaped":           echo(escapeAll(key, `\u%04x`)),
		"stream, split in two":   chunks("Your key is ", key[:20], key[20:], "."),
		"stream, 4 bytes each":   chunks(fours...),
		"stream, upper, in 3":    chunks(strings.ToUpper(key[:10]), strings.ToUpper(key[10:25]), strings.ToUpper(key[25:])),
		"stream, base64, in two": chunks(base64.StdEncoding.EncodeToString([]byte(key))[:30], base64.StdEncoding.EncodeToString([]byte(key))[30:]),
	}
}

// queryCredentials are the query parameter names that carry a
// credential, each with its own secret.
var queryCredentials = []string{
	"access_token", "token", "subscription-key", "key", "api_key", "api-key", "apikey", "code", "sig",
	"signature", "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "client_secret", "password",
}

// querySecret is the secret sent in the query parameter name, one that
// shares no 12-byte run with the name or the other secrets.
func querySecret(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "qs-" + hex.EncodeToString(sum[:10])
}

// TestRecordScrubsEveryShape: an upstream that writes the key back in
// every shape (upper-cased, base64 at each alignment, hex, cut short,
// URL- and JSON-escaped, spread over the events of a stream) and echoes
// the query, with a credential in each query parameter that names one,
// in a parameter with an ordinary name, in the upstream URL's own query,
// and in a request's body: the file holds no 12-byte run of any of these
// secrets in any form, and it plays back, the same requests matching
// those recorded.
func TestRecordScrubsEveryShape(t *testing.T) {
	shapes := echoShapes(scrubKey)
	const upstreamKey = "up-AIzaSyD-0123456789abcdef"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Shape string }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		if req.Shape == "query" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Ratelimit-Echo", r.URL.RawQuery)
			q, _ := json.Marshal(r.URL.Query())
			fmt.Fprintf(w, `{"query":%q,"values":%s}`, r.URL.RawQuery, q)
			return
		}
		body := shapes[req.Shape]
		if strings.HasPrefix(body, "data:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(upstream.Close)

	type call struct{ query, body string }
	var calls []call
	for name := range shapes {
		calls = append(calls, call{"", fmt.Sprintf(`{"shape":%q}`, name)})
	}
	for _, name := range queryCredentials {
		calls = append(calls, call{"?api-version=2024-10-21&" + name + "=" + querySecret(name), `{"shape":"query"}`})
	}
	calls = append(calls,
		call{"?echo=" + scrubKey, `{"shape":"query"}`},
		call{"", `{"shape":"raw","prompt":"my key is ` + strings.ToUpper(scrubKey) + `"}`},
	)
	do := func(base string, c call) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/echo"+c.query, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+scrubKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	file := filepath.Join(t.TempDir(), "echo.json")
	rec := oniontest.Record(t, upstream.URL+"/v1?key="+upstreamKey, file)
	for _, c := range calls {
		if status, _ := do(rec.URL(), c); status != http.StatusOK {
			t.Fatalf("%s%s through the recorder: status %d", c.body, c.query, status)
		}
	}
	rec.Close()

	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{scrubKey, upstreamKey}
	for _, name := range queryCredentials {
		secrets = append(secrets, querySecret(name))
	}
	for _, text := range fileTexts(t, b) {
		for _, s := range secrets {
			if f := leakedForm(text, s); f != "" {
				t.Errorf("the file holds %q, of %q, in %.300q", f, s, text)
			}
		}
	}
	for _, name := range queryCredentials {
		if !strings.Contains(string(b), name+"=[redacted]") {
			t.Errorf("the file has no %s=[redacted]", name)
		}
	}

	play := oniontest.Playback(t, file)
	for _, c := range calls {
		status, body := do(play.URL(), c)
		if status != http.StatusOK {
			t.Errorf("%s%s played back: status %d: %s", c.body, c.query, status, body)
		}
		if f := leakedForm(body, scrubKey); f != "" {
			t.Errorf("%s%s played back holds %q", c.body, c.query, f)
		}
	}
}

// fileTexts are the texts a recording file holds, to be searched for a
// secret: the file, each string in it with percent escapes undone, and,
// for each stream, the text each place in its events' data spreads over
// the events, joined, as a client joins a reply's deltas.
func fileTexts(t *testing.T, file []byte) []string {
	t.Helper()
	texts := []string{string(file)}
	var f struct {
		Exchanges []struct {
			Response struct{ Events []string }
		}
	}
	var doc any
	if err := json.Unmarshal(file, &f); err != nil || json.Unmarshal(file, &doc) != nil {
		t.Fatalf("the file is no JSON: %v", err)
	}
	var walk func(v any, path string, joined map[string]*strings.Builder)
	walk = func(v any, path string, joined map[string]*strings.Builder) {
		switch v := v.(type) {
		case string:
			if u, err := url.PathUnescape(v); err == nil {
				texts = append(texts, u)
			}
			texts = append(texts, v)
			if joined != nil {
				if joined[path] == nil {
					joined[path] = &strings.Builder{}
				}
				joined[path].WriteString(v)
			}
		case map[string]any:
			for k, c := range v {
				walk(c, path+"."+k, joined)
			}
		case []any:
			for i, c := range v {
				walk(c, fmt.Sprintf("%s.%d", path, i), joined)
			}
		}
	}
	walk(doc, "", nil)
	for _, ex := range f.Exchanges {
		joined := map[string]*strings.Builder{}
		for _, e := range ex.Response.Events {
			for line := range strings.Lines(e) {
				var data any
				if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && json.Unmarshal([]byte(d), &data) == nil {
					walk(data, "", joined)
				}
			}
		}
		for _, b := range joined {
			texts = append(texts, b.String())
		}
	}
	return texts
}
