package gemini_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"go.yaml.in/yaml/v4"
)

// This file reads the exchanges recorded against the live Gemini API
// that testdata/recorded holds (see its README): pydantic-ai's VCR
// cassettes (YAML) and langchaingo's httprr traces. A cassette server
// serves their replies in order, byte for byte, and keeps what the client
// sent, for the tests to set beside what was recorded.

// recorded is one exchange of a recording.
type recorded struct {
	method, path string
	// request is the body recorded: the JSON document, nil when none.
	request any
	status  int
	header  http.Header
	reply   []byte
}

// loadRecording reads a recording of testdata/recorded.
func loadRecording(t *testing.T, name string) []recorded {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(name, ".httprr") {
		return loadHTTPRR(t, b)
	}
	var c struct {
		Interactions []struct {
			Request struct {
				Method     string `yaml:"method"`
				URI        string `yaml:"uri"`
				Body       any    `yaml:"body"`
				ParsedBody any    `yaml:"parsed_body"`
			} `yaml:"request"`
			Response struct {
				Status struct {
					Code int `yaml:"code"`
				} `yaml:"status"`
				Headers    map[string][]string     `yaml:"headers"`
				Body       struct{ String string } `yaml:"body"`
				ParsedBody any                     `yaml:"parsed_body"`
			} `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []recorded
	for _, in := range c.Interactions {
		ex := recorded{method: strings.ToUpper(in.Request.Method), status: in.Response.Status.Code, header: http.Header{}}
		ex.path, _, _ = strings.Cut(in.Request.URI[strings.Index(in.Request.URI, "/v1beta/"):], "?")
		ex.request = in.Request.ParsedBody
		if s, ok := in.Request.Body.(string); ok && ex.request == nil {
			_ = json.Unmarshal([]byte(s), &ex.request)
		}
		for k, v := range in.Response.Headers {
			if strings.EqualFold(k, "content-type") {
				ex.header.Set("Content-Type", v[0])
			}
		}
		ex.reply = []byte(in.Response.Body.String)
		if in.Response.ParsedBody != nil {
			if ex.reply, err = json.Marshal(in.Response.ParsedBody); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, ex)
	}
	return out
}

// loadHTTPRR reads an httprr trace: "httprr trace v1", then for each
// exchange a line with the lengths of the request and the reply, and both
// as they went on the wire.
func loadHTTPRR(t *testing.T, b []byte) []recorded {
	t.Helper()
	rest, ok := bytes.CutPrefix(b, []byte("httprr trace v1\n"))
	if !ok {
		t.Fatal("not an httprr trace")
	}
	var out []recorded
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		f := strings.Fields(string(line))
		nreq, err1 := strconv.Atoi(f[0])
		nresp, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || nreq+nresp > len(after) {
			t.Fatalf("httprr: bad lengths %q", line)
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(after[:nreq])))
		if err != nil {
			t.Fatal(err)
		}
		reqBody, _ := io.ReadAll(req.Body)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(after[nreq:nreq+nresp])), req)
		if err != nil {
			t.Fatal(err)
		}
		respBody, _ := io.ReadAll(resp.Body)
		ex := recorded{method: req.Method, path: req.URL.Path, status: resp.StatusCode,
			header: http.Header{"Content-Type": resp.Header["Content-Type"]}, reply: respBody}
		_ = json.Unmarshal(reqBody, &ex.request)
		out = append(out, ex)
		rest = after[nreq+nresp:]
	}
	return out
}

// cassette is a server that serves a recording's replies in order.
type cassette struct {
	*httptest.Server
	t   *testing.T
	rec []recorded

	mu   sync.Mutex // guards the fields below
	next int
	sent []sentRequest
}

// sentRequest is a request the cassette got.
type sentRequest struct {
	path, query string
	header      http.Header
	body        []byte
}

func playCassette(t *testing.T, name string) *cassette {
	c := &cassette{t: t, rec: loadRecording(t, name)}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *cassette) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	i := c.next
	c.next++
	c.sent = append(c.sent, sentRequest{r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
	c.mu.Unlock()
	if i >= len(c.rec) {
		c.t.Errorf("request %d comes after the %d recorded", i+1, len(c.rec))
		http.Error(w, "no exchange left", http.StatusInternalServerError)
		return
	}
	ex := c.rec[i]
	if ex.path != r.URL.Path {
		c.t.Errorf("request %d: path %s, recorded %s", i+1, r.URL.Path, ex.path)
	}
	for k, v := range ex.header {
		w.Header()[k] = v
	}
	w.WriteHeader(ex.status)
	_, _ = w.Write(ex.reply)
}

// requests returns what the cassette got.
func (c *cassette) requests() []sentRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sentRequest(nil), c.sent...)
}

// normal is a request body, what onion sent or what was recorded, made
// comparable: keys in camelCase (the Python client writes some in
// snake_case, the API takes both), bytes (signatures, image data) in
// standard base64 (the Python client writes URL-safe base64, the API
// takes both), the IDs pydantic-ai gives calls that came without one left
// out, empty descriptions and args objects left out (genai drops them),
// a function response's result under "output" (pydantic-ai writes
// "return_value" or "error"; onion writes "output", as the API
// documents), and generationConfig.responseModalities ["TEXT"], pydantic-
// ai's default, left out.
func normal(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	_ = json.Unmarshal(b, &x)
	x = normalize(x, "")
	if m, ok := x.(map[string]any); ok {
		if g, ok := m["generationConfig"].(map[string]any); ok {
			delete(g, "responseModalities")
			if len(g) == 0 {
				delete(m, "generationConfig")
			}
		}
	}
	return x
}

func normalize(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			k = camel(k)
			if k == "id" {
				if s, _ := val.(string); strings.HasPrefix(s, "pyd_ai_") {
					continue
				}
			}
			if k == "description" && val == "" {
				continue // genai leaves out an empty description
			}
			if k == "args" {
				if m, ok := val.(map[string]any); ok && len(m) == 0 {
					continue // and an empty args object
				}
			}
			out[k] = normalize(val, k)
		}
		if key == "response" {
			for _, alias := range []string{"return_value", "returnValue", "error", "response"} {
				if r, ok := out[alias]; ok {
					delete(out, alias)
					out["output"] = r
				}
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e, key)
		}
		return out
	case string:
		if key == "thoughtSignature" || key == "data" {
			return std64(x)
		}
	}
	return v
}

// std64 is s, base64 in either alphabet, in the standard one.
func std64(s string) string {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return base64.StdEncoding.EncodeToString(b)
		}
	}
	return s
}

func camel(k string) string {
	if !strings.Contains(k, "_") {
		return k
	}
	var b strings.Builder
	up := false
	for _, r := range k {
		switch {
		case r == '_':
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// jsonOf decodes b.
func jsonOf(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// sameJSON reports whether a and b encode alike, and both encoded.
func sameJSON(a, b any) (bool, string, string) {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y), string(x), string(y)
}
