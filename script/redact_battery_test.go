package script_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/onionkit/onion/script"
)

// secret40 is a 40-byte credential: long enough that an echo of 32 of its
// bytes, or of pieces of it, is an echo to catch.
const secret40 = "Zq8vT3mK9pL2xR7wN4bY6cH1jF5gD0sA-e_u.iOk"

// credentials are the ways Go gives an application secret40, and how the
// application reads it back.
var credentials = []struct {
	name string
	opt  script.Option
	read func(*http.Request) string
}{
	{"bearer", script.Header("Authorization", "Bearer "+secret40), func(r *http.Request) string {
		return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}},
	{"token", script.Header("Authorization", `Token token="`+secret40+`"`), func(r *http.Request) string {
		_, t, _ := strings.Cut(r.Header.Get("Authorization"), `token="`)
		return strings.TrimSuffix(t, `"`)
	}},
	{"basic", script.Header("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("bot:"+secret40))), func(r *http.Request) string {
		_, pass, _ := r.BasicAuth()
		return pass
	}},
	{"cookie", script.Header("Cookie", "theme=dark; session="+secret40), func(r *http.Request) string {
		c, err := r.Cookie("session")
		if err != nil {
			return ""
		}
		return c.Value
	}},
	{"query", script.Query("api_key", secret40), func(r *http.Request) string { return r.URL.Query().Get("api_key") }},
	{"header", script.Header("X-Api-Key", secret40), func(r *http.Request) string { return r.Header.Get("X-Api-Key") }},
}

// shapes are the ways an application echoes the secret: text turns it into
// the echo, body (if set) turns the whole answer into its bytes.
var shapes = map[string]struct{ text, body func(string) string }{
	"raw":         {text: func(s string) string { return s }},
	"upper":       {text: strings.ToUpper},
	"lower":       {text: strings.ToLower},
	"base64-0":    {text: func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	"base64-1":    {text: func(s string) string { return base64.StdEncoding.EncodeToString([]byte("\xfb" + s)) }},
	"base64-2":    {text: func(s string) string { return base64.StdEncoding.EncodeToString([]byte("\xfb\xff" + s)) }},
	"base64url-1": {text: func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte("\xfb" + s)) }},
	"hex":         {text: func(s string) string { return hex.EncodeToString([]byte(s)) }},
	"url-escaped": {text: percentAll},
	"json-escaped": {text: func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		return b.String()
	}},
	"utf16le":     {text: func(s string) string { return s }, body: func(b string) string { return utf16Of(b, false) }},
	"utf16be":     {text: func(s string) string { return s }, body: func(b string) string { return utf16Of(b, true) }},
	"html-split":  {text: func(s string) string { return splitBy(s, "", "<b></b>", "") }},
	"cdata-split": {text: func(s string) string { return splitBy(s, "<![CDATA[", "]]><![CDATA[", "]]>") }},
	"truncated":   {text: func(s string) string { return s[:32] }},
}

// splitBy cuts s into pieces of 4 bytes, each shorter than any run the
// redaction looks for on its own, and joins them with markup.
func splitBy(s, open, sep, end string) string {
	var parts []string
	for p := range slices.Chunk([]byte(s), 4) {
		parts = append(parts, string(p))
	}
	return open + strings.Join(parts, sep) + end
}

func utf16Of(s string, bigEndian bool) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

// wraps are the documents the echo comes in.
var wraps = map[string]func(echo string) string{
	"plain": func(e string) string { return "your key: " + e },
	"json": func(e string) string {
		b, _ := json.Marshal(map[string]string{"echo": e})
		return string(b)
	},
	"html": func(e string) string {
		return `<html><body><p title="` + html.EscapeString(e) + `">` + e + `</p></body></html>`
	},
	"xml": func(e string) string { return `<?xml version="1.0"?><r a="` + html.EscapeString(e) + `">` + e + `</r>` },
}

// echoShapes answers /echo?shape=&wrap=&status= with secret40, once the
// credential read by read is right, in a header and in the body.
func echoShapes(t *testing.T, read func(*http.Request) string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if read(r) != secret40 {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		sh := shapes[q.Get("shape")]
		echo := sh.text(secret40)
		body := wraps[q.Get("wrap")](echo)
		if sh.body != nil {
			body = sh.body(body)
		}
		w.Header().Set("X-Echo", echo)
		if q.Get("status") != "" {
			w.WriteHeader(http.StatusInternalServerError)
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

// waysStar reads the echo every way a script can, and returns each reading
// reversed: what the script saw, which the redaction of the tool's result
// cannot recognise, so that the test sees what the script saw.
const waysStar = `
def _r(v):
    if type(v) == "string":
        return v[::-1]
    return str(v)[::-1]

def peek(shape, wrap):
    """Reads what the application echoes, every way a script can.

    onion:intent read
    """
    answer = request("GET", "/echo", query={"shape": shape, "wrap": wrap})
    body = answer.text
    out = {"status": answer.status, "text": _r(body), "headers": _r(answer.headers), "dig": _r(dig(answer, "text"))}
    out["re findall"] = _r(re.findall("[^<>]+", body))
    m = re.search("(?s).+", body)
    out["re search"] = _r(m.group(0) if m else "")
    out["re sub"] = _r(re.sub("<[^>]*>", "", body))
    out["text squash"] = _r(text.squash(body))
    j = attempt(answer.json)
    out["json"] = _r(j.value if j.ok else j.error)
    d = attempt(json.decode, body)
    out["json decode"] = _r(d.value if d.ok else d.error)
    out["dig json"] = _r(dig(j.value, "echo"))
    h = attempt(html.parse, body)
    if h.ok:
        p = h.value.select_one("p")
        out["html text"] = _r(h.value.text)
        out["html attrs"] = _r(p.attrs if p else {})
        out["html attr"] = _r(p.attr("title") if p else "")
    else:
        out["html error"] = _r(h.error)
    x = attempt(xml.parse, body)
    if x.ok:
        r = x.value.select_one("r")
        out["xml text"] = _r(x.value.text)
        out["xml attrs"] = _r(r.attrs if r else {})
    else:
        out["xml error"] = _r(x.error)
    bad = attempt(ok, request("GET", "/echo", query={"shape": shape, "wrap": wrap, "status": "500"}))
    out["attempt"] = _r(bad.error)
    return out

def fail_with(shape, wrap):
    """Fails with what the application says.

    onion:intent read
    """
    ok(request("GET", "/echo", query={"shape": shape, "wrap": wrap, "status": "500"}))
`

// TestSecretShapesNeverReachTheScript echoes each credential in each shape,
// in each kind of document, and reads it back every way a script can: no
// reading holds 12 bytes of the secret in any form.
func TestSecretShapesNeverReachTheScript(t *testing.T) {
	for _, cred := range credentials {
		app := echoShapes(t, cred.read)
		tools, err := script.Parse("ways.star", waysStar, script.BaseURL(app.URL), cred.opt)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]func(context.Context, string) (string, error){}
		for _, tl := range tools {
			byName[tl.Name()] = tl.Call
		}
		for shape := range shapes {
			for wrap := range wraps {
				t.Run(cred.name+"/"+shape+"/"+wrap, func(t *testing.T) {
					args := fmt.Sprintf(`{"shape":%q,"wrap":%q}`, shape, wrap)
					out, err := byName["peek"](context.Background(), args)
					if err != nil {
						t.Fatal(err)
					}
					var ways map[string]any
					if err := json.Unmarshal([]byte(out), &ways); err != nil {
						t.Fatal(err)
					}
					if ways["status"] != 200.0 {
						t.Fatalf("the application refused the credential: %s", out)
					}
					for way, v := range ways {
						if s, ok := v.(string); ok {
							if form := secretIn(reverse(s)); form != "" {
								t.Errorf("%s: the script saw the secret (%s) in %q", way, form, reverse(s))
							}
						}
					}
					_, err = byName["fail_with"](context.Background(), args)
					if err == nil {
						t.Fatal("fail_with succeeded on a 500")
					}
					if form := secretIn(err.Error()); form != "" {
						t.Errorf("error: the model saw the secret (%s) in %q", form, err)
					}
				})
			}
		}
	}
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// secretIn names the form in which s holds a run of 12 bytes of secret40,
// or returns "". It reads s as it is and decoded every way the shapes
// encode, independently of the redaction's own views.
func secretIn(s string) string {
	decoded := map[string]string{"as is": s}
	if u, ok := unescapeJSON(s); ok {
		decoded["json"] = u
	}
	for name, d := range maps.Clone(decoded) {
		decoded[name+", percent"] = percentDecode(d)
		decoded[name+", entities"] = html.UnescapeString(d)
		decoded[name+", markup"] = html.UnescapeString(markup.ReplaceAllString(d, ""))
		decoded[name+", utf-16"] = strings.NewReplacer("\x00", "", `\x00`, "").Replace(d)
	}
	for name, d := range decoded {
		d = strings.ToLower(d)
		for _, f := range secretForms() {
			for i := 0; i+f.run <= len(f.text); i += f.step {
				if strings.Contains(d, f.text[i:i+f.run]) {
					return name + ", " + f.name
				}
			}
		}
	}
	return ""
}

// markup matches the tags and CDATA delimiters the split shapes add.
var markup = regexp.MustCompile(`<[^>]*>|<!\[CDATA\[|\]\]>`)

// A form is secret40 encoded: every run of run characters from a multiple
// of step encodes 12 bytes of it.
type form struct {
	name      string
	text      string
	run, step int
}

func secretForms() []form {
	out := []form{
		{"raw", strings.ToLower(secret40), 12, 1},
		{"hex", hex.EncodeToString([]byte(secret40)), 24, 2},
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			out = append(out, form{"base64", strings.ToLower(enc.EncodeToString([]byte(secret40[k:]))), 16, 4})
		}
	}
	return out
}

// unescapeJSON undoes \uXXXX and \/ escapes.
func unescapeJSON(s string) (string, bool) {
	u := jsonEscape.ReplaceAllStringFunc(s, func(e string) string {
		if e == `\/` {
			return "/"
		}
		var r rune
		fmt.Sscanf(e[2:], "%04x", &r)
		return string(r)
	})
	return u, u != s
}

var jsonEscape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}|\\/`)

func percentDecode(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// TestQueryIsSetByGo sends a script.Query parameter with every request,
// refuses a script's parameter of the same name, in any case, and redacts
// it in the error of a failed request.
func TestQueryIsSetByGo(t *testing.T) {
	var mu sync.Mutex // guards seen
	var seen []string
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RawQuery)
		mu.Unlock()
	}))
	defer app.Close()
	tools, err := script.Parse("q.star", `
def send(name):
    """Sends a query parameter.

    onion:intent read
    """
    return request("GET", "/", query={name: "mine"}).status
`, script.BaseURL(app.URL), script.Query("api_key", secret40))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"api_key", "API_KEY", "Api_Key"} {
		if _, err := tools[0].Call(context.Background(), `{"name":"`+name+`"}`); err == nil || !strings.Contains(err.Error(), "set by the runtime") {
			t.Errorf("query={%q: ...}: err = %v, want it refused", name, err)
		}
	}
	if out, err := tools[0].Call(context.Background(), `{"name":"page"}`); err != nil || out != "200" {
		t.Fatalf("an unrelated parameter: %q, %v", out, err)
	}
	mu.Lock()
	if want := "api_key=" + secret40 + "&page=mine"; len(seen) != 1 || seen[0] != want {
		t.Errorf("the application saw %q, want only %q", seen, want)
	}
	mu.Unlock()

	// A failed request's error names its URL, query included.
	app.Close()
	_, err = tools[0].Call(context.Background(), `{"name":"page"}`)
	if err == nil || secretIn(err.Error()) != "" || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("a request to a closed application: err = %v, want the parameter redacted", err)
	}
}

// BenchmarkRedactedAnswer reads a 1 MiB JSON answer with a credential set,
// through ok() and json.decode: the response's redaction and the two
// crossings back into the script.
func BenchmarkRedactedAnswer(b *testing.B) {
	row := `{"id": 1, "title": "Printer on fire \u00e9", "url": "/t/1?a=%20b&amp;c", "html": "<p>a <b>b</b></p>"},`
	body := "[" + strings.Repeat(row, (1<<20)/len(row)-1) + `{"id": 2}]`
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
	defer app.Close()
	tools, err := script.Parse("bench.star", `
def read():
    """Reads the answer twice.

    onion:intent read
    """
    answer = request("GET", "/")
    return len(ok(answer)) + len(json.decode(answer.text))
`, script.BaseURL(app.URL), script.Header("Authorization", "Bearer "+secret40), script.MaxResponseBytes(2<<20), script.MaxSteps(10_000_000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := tools[0].Call(context.Background(), `{}`); err != nil {
			b.Fatal(err)
		}
	}
}
