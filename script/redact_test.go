package script_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/script"
)

// apiKey is a Go-set credential with the characters escaping changes.
const apiKey = "KEY-abc&def/ghi+jkl<mno>"

// echoForms are the ways a careless or hostile application sends the
// X-Api-Key header back.
var echoForms = map[string]func(string) string{
	"raw":         func(s string) string { return s },
	"json":        func(s string) string { b, _ := json.Marshal(s); return string(b) },
	"json-all":    escapeAll,
	"json-slash":  func(s string) string { b, _ := json.Marshal(s); return strings.ReplaceAll(string(b), "/", `\/`) },
	"query":       url.QueryEscape,
	"path":        url.PathEscape,
	"percent-all": percentAll,
	"base64":      func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64url":   func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	"base64-in-1": func(s string) string { return base64.StdEncoding.EncodeToString([]byte("x" + s + "y")) },
	"base64-in-2": func(s string) string { return base64.StdEncoding.EncodeToString([]byte("xy" + s)) },
	"hex":         func(s string) string { return hex.EncodeToString([]byte(s)) },
	"html":        html.EscapeString,
	"entities":    func(s string) string { return entitiesAll(s) },
	"upper":       strings.ToUpper,
}

func escapeAll(s string) string {
	var b strings.Builder
	b.WriteString(`"`)
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\u%04X`, c)
	}
	b.WriteString(`"`)
	return b.String()
}

func percentAll(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, "%%%02x", c)
	}
	return b.String()
}

func entitiesAll(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, "&#x%x;", c)
	}
	return b.String()
}

// echoApp sends X-Api-Key back in the form named by ?form=, in the body (a
// JSON document when the form is a JSON string), in a response header's
// value and in a response header's name.
func echoApp(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Api-Key")
		if key != apiKey {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		if n := r.URL.Query().Get("pad"); n != "" {
			pad, _ := strconv.Atoi(n)
			io.WriteString(w, strings.Repeat("a", pad)+key+strings.Repeat("b", 100))
			return
		}
		enc := echoForms[r.URL.Query().Get("form")](key)
		w.Header().Set("X-Echo", "key="+enc)
		w.Header().Set("X-"+hex.EncodeToString([]byte(key)), "1")
		w.Header().Set("Set-Cookie", "k="+enc)
		if strings.HasPrefix(enc, `"`) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"key": %s, %s: 1}`, enc, enc)
			return
		}
		fmt.Fprintf(w, "<p>your key is %s.</p>", enc)
	}))
	t.Cleanup(s.Close)
	return s
}

const peekStar = `
def peek(form):
    """Reads what the application echoes.

    onion:intent read
    """
    answer = request("GET", "/", query={"form": form})
    parsed = attempt(answer.json)
    return {"text": answer.text, "headers": answer.headers, "json": parsed.value, "ok": ok(answer)}

def cut(pad):
    """Reads a long answer.

    pad (integer): bytes before the key

    onion:intent read
    """
    answer = request("GET", "/", query={"pad": pad})
    return {"body": answer.body, "truncated": answer.truncated}
`

func parseWithKey(t *testing.T, url, src string, opts ...script.Option) map[string]*onion.Tool {
	t.Helper()
	opts = append([]script.Option{script.BaseURL(url), script.Header("X-Api-Key", apiKey)}, opts...)
	tools, err := script.Parse("peek.star", src, opts...)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*onion.Tool{}
	for _, tl := range tools {
		m[tl.Name()] = tl
	}
	return m
}

// leaks lists the strings in v (keys included) that still hold the key in
// any of the echo forms, or a part of it.
func leaks(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for name, enc := range echoForms {
				e := strings.Trim(enc(apiKey), `"`)
				lx := strings.ToLower(x)
				if strings.Contains(x, e) || strings.Contains(lx, strings.ToLower(apiKey)) || strings.Contains(lx, "ghi+jkl") || strings.Contains(lx, "def/ghi") {
					out = append(out, fmt.Sprintf("%s in %q", name, x))
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				walk(k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func TestCredentialsRedactedInEveryForm(t *testing.T) {
	app := echoApp(t)
	tools := parseWithKey(t, app.URL, peekStar)
	for form := range echoForms {
		t.Run(form, func(t *testing.T) {
			out := mustCall(t, tools, "peek", `{"form":"`+form+`"}`)
			var got any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if l := leaks(got); len(l) > 0 {
				t.Errorf("the script saw the key: %v\n%s", l, out)
			}
			if n := strings.Count(out, "[redacted]"); n < 4 {
				t.Errorf("want the key redacted in the body, the headers and the header name; got %d redactions:\n%s", n, out)
			}
		})
	}
}

func TestCredentialsRedactedBeforeTheCut(t *testing.T) {
	app := echoApp(t)
	for _, limit := range []int{script.DefaultMaxResponseBytes, 64} {
		tools := parseWithKey(t, app.URL, peekStar, script.MaxResponseBytes(limit))
		for _, inside := range []int{1, len(apiKey) / 2, len(apiKey) - 1} {
			t.Run(fmt.Sprint(limit, "-", inside), func(t *testing.T) {
				out := mustCall(t, tools, "cut", fmt.Sprintf(`{"pad":%d}`, limit-inside))
				var got struct {
					Body      string
					Truncated bool
				}
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatal(err)
				}
				body, _, _ := strings.Cut(got.Body, "\n[cut:")
				if !got.Truncated || strings.Trim(body, "a") != "" && strings.Trim(body, "a") != "[redacted]" {
					t.Errorf("%d bytes of the key inside the limit: the script got %q after the padding", inside, strings.TrimLeft(body, "a"))
				}
			})
		}
	}
}

func TestScriptHeaderTwinsRefused(t *testing.T) {
	var mu sync.Mutex // guards hits
	hits := 0
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer app.Close()
	tools := parseWithKey(t, app.URL, `
def send(name):
    """Sends a header.

    onion:intent read
    """
    return request("GET", "/", headers={name: "mine"}).status
`)
	for _, name := range []string{"X-Api-Key", "x-api-key", "X_Api_Key", "x_API_key", "X.Api.Key", "XApiKey", "Content_Length", "transfer_encoding", "Range", "If-Range", "Accept-Encoding"} {
		t.Run(name, func(t *testing.T) {
			_, err := tools["send"].Call(context.Background(), `{"name":"`+name+`"}`)
			if err == nil || !strings.Contains(err.Error(), "cannot be set by a script") {
				t.Errorf("err = %v, want the header refused", err)
			}
		})
	}
	if hits != 0 {
		t.Errorf("refused requests reached the app %d times", hits)
	}
	if out, err := tools["send"].Call(context.Background(), `{"name":"X-Api-Version"}`); err != nil || out != "200" {
		t.Errorf("an unrelated header: %q, %v", out, err)
	}
}

func TestMethodOverrideNeedsTheIntent(t *testing.T) {
	var mu sync.Mutex // guards hits
	hits := 0
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer app.Close()
	src := `
def %s(method, header="", value="", param=""):
    """Sends method, asking the app to act as another.

    onion:intent %s
    """
    if param:
        return request(method, "/", query={param: value}).status
    if header == "body":
        return request(method, "/", body={"_method": value}).status
    if header == "form":
        return request(method, "/", body="a=1&_method=" + value, headers={"Content-Type": "application/x-www-form-urlencoded"}).status
    return request(method, "/", headers={header: value}).status
`
	tools := parseWithKey(t, app.URL, fmt.Sprintf(src, "reader", "read")+fmt.Sprintf(src, "writer", "write")+fmt.Sprintf(src, "deleter", "delete"))
	for _, tc := range []struct {
		tool, args string
		ok         bool
	}{
		{"reader", `{"method":"GET","header":"X-HTTP-Method-Override","value":"DELETE"}`, false},
		{"reader", `{"method":"GET","header":"X-HTTP-Method","value":"delete"}`, false},
		{"reader", `{"method":"GET","header":"X-Method-Override","value":"POST"}`, false},
		{"reader", `{"method":"GET","header":"x_http_method_override","value":" PUT "}`, false},
		{"reader", `{"method":"GET","param":"_method","value":"DELETE"}`, false},
		{"reader", `{"method":"GET","param":"X-HTTP-Method-Override","value":"DELETE"}`, false},
		{"reader", `{"method":"GET","header":"X-HTTP-Method-Override","value":"GET"}`, true},
		{"writer", `{"method":"POST","header":"X-HTTP-Method-Override","value":"DELETE"}`, false},
		{"writer", `{"method":"POST","header":"body","value":"DELETE"}`, false},
		{"writer", `{"method":"POST","header":"form","value":"DELETE"}`, false},
		{"writer", `{"method":"POST","header":"form","value":"PATCH"}`, true},
		{"writer", `{"method":"POST","header":"X-HTTP-Method-Override","value":"PUT"}`, true},
		{"writer", `{"method":"POST","header":"X-HTTP-Method-Override","value":"TRACE"}`, false},
		{"deleter", `{"method":"POST","header":"X-HTTP-Method-Override","value":"DELETE"}`, true},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			mu.Lock()
			before := hits
			mu.Unlock()
			out, err := tools[tc.tool].Call(context.Background(), tc.args)
			mu.Lock()
			sent := hits - before
			mu.Unlock()
			if tc.ok {
				if err != nil || out != "200" || sent != 1 {
					t.Errorf("= %q, %v (sent %d); want 200", out, err, sent)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "(as a method override) is not allowed for a "+map[string]string{"reader": "read", "writer": "write"}[tc.tool]) || sent != 0 {
				t.Errorf("err = %v (sent %d), want the override refused before sending", err, sent)
			}
		})
	}
}

func TestMethodOverrideCountsAsAWrite(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer app.Close()
	tools := parseWithKey(t, app.URL, `
def put_then_fail():
    """Asks for a PUT with a GET, then fails.

    onion:intent write
    """
    request("GET", "/", headers={"X-HTTP-Method-Override": "PUT"})
    fail("after the override")

def get_then_fail():
    """Sends a plain GET, then fails.

    onion:intent write
    """
    request("GET", "/", headers={"X-HTTP-Method-Override": "GET"})
    fail("after the read")
`)
	if _, err := tools["put_then_fail"].Call(context.Background(), `{}`); !errors.Is(err, onion.ErrOutcomeUnknown) {
		t.Errorf("a GET acting as PUT, then a failure: err = %v, want onion.ErrOutcomeUnknown", err)
	}
	if _, err := tools["get_then_fail"].Call(context.Background(), `{}`); err == nil || errors.Is(err, onion.ErrOutcomeUnknown) {
		t.Errorf("a GET, then a failure: err = %v, want a plain failure", err)
	}
}
