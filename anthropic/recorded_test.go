package anthropic_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/onionkit/onion/oniontest"
)

// This file reads the real exchanges with api.anthropic.com stored in
// testdata/recorded (see its README): langchaingo's httprr traces and
// pydantic-ai's VCR cassettes, each kept as it was recorded. The tests in
// recorded_replay_test.go serve their replies and compare what onion sends
// with what the recording client sent.

// exchange is one recorded request and the reply it got.
type exchange struct {
	request     map[string]any // the request's JSON body
	status      int
	contentType string
	body        []byte // the reply's body, byte for byte for a stream and an httprr trace
}

// step is the reply of x, served as it came.
func (x exchange) step() oniontest.Step {
	return oniontest.ReplayStatus(x.status, x.contentType, x.body)
}

// loadRecorded reads a recording from testdata/recorded.
func loadRecorded(t *testing.T, name string) []exchange {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	var xs []exchange
	if strings.HasSuffix(name, ".httprr") {
		xs, err = parseHTTPRR(data)
	} else {
		xs, err = parseCassette(data)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return xs
}

// parseHTTPRR reads an httprr trace (golang.org/x/oscar's format, which
// langchaingo uses): "httprr trace v1", then for each exchange a line with
// the lengths of the request and the reply, and both as HTTP/1.1 text.
func parseHTTPRR(data []byte) ([]exchange, error) {
	rest, ok := bytes.CutPrefix(data, []byte("httprr trace v1\n"))
	if !ok {
		return nil, fmt.Errorf("not an httprr trace")
	}
	var xs []exchange
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("a record without its header")
		}
		var nreq, nresp int
		if _, err := fmt.Sscanf(string(line), "%d %d", &nreq, &nresp); err != nil || nreq < 0 || nresp < 0 || nreq+nresp > len(after) {
			return nil, fmt.Errorf("a bad record header %q", line)
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(after[:nreq])))
		if err != nil {
			return nil, err
		}
		reqBody, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(after[nreq:nreq+nresp])), req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if n, err := strconv.Atoi(resp.Header.Get("Content-Length")); err != nil || n != len(body) {
			return nil, fmt.Errorf("the reply's body is %d bytes, its Content-Length %q", len(body), resp.Header.Get("Content-Length"))
		}
		x := exchange{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body}
		if err := json.Unmarshal(reqBody, &x.request); err != nil {
			return nil, err
		}
		xs = append(xs, x)
		rest = after[nreq+nresp:]
	}
	return xs, nil
}

// parseCassette reads a VCR cassette of pydantic-ai: a request's JSON body
// is kept as YAML (parsed_body), a reply's as YAML too (parsed_body) or, a
// stream, as its text (body.string).
func parseCassette(data []byte) ([]exchange, error) {
	var c struct {
		Interactions []struct {
			Request struct {
				ParsedBody map[string]any `yaml:"parsed_body"`
			} `yaml:"request"`
			Response struct {
				Headers    map[string][]string `yaml:"headers"`
				ParsedBody any                 `yaml:"parsed_body"`
				Body       struct {
					String string `yaml:"string"`
				} `yaml:"body"`
				Status struct {
					Code int `yaml:"code"`
				} `yaml:"status"`
			} `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	var xs []exchange
	for _, in := range c.Interactions {
		x := exchange{request: in.Request.ParsedBody, status: in.Response.Status.Code, contentType: "application/json"}
		if ct := in.Response.Headers["content-type"]; len(ct) > 0 {
			x.contentType = ct[0]
		}
		if in.Response.ParsedBody != nil {
			b, err := json.Marshal(in.Response.ParsedBody)
			if err != nil {
				return nil, err
			}
			x.body = b
		} else {
			x.body = []byte(in.Response.Body.String)
		}
		xs = append(xs, x)
	}
	return xs, nil
}

// sentJSON is the part of a request body at path (keys and indexes joined
// by dots), as a generic JSON value, for comparing with a recording.
func sentJSON(t *testing.T, body any, path string) any {
	t.Helper()
	var v any
	switch b := body.(type) {
	case []byte:
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
	default:
		// A recorded body: through JSON, so that numbers compare alike.
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
	}
	if path == "" {
		return v
	}
	for _, k := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(c) {
				t.Fatalf("%s: no element %s", path, k)
			}
			v = c[i]
		default:
			t.Fatalf("%s: nothing at %s", path, k)
		}
	}
	return v
}

// same compares two JSON values, leaving out the keys in skip at any
// depth.
func same(a, b any, skip ...string) bool {
	return fmt.Sprint(strip(a, skip)) == fmt.Sprint(strip(b, skip))
}

func strip(v any, skip []string) any {
	switch c := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range c {
			skipped := false
			for _, s := range skip {
				skipped = skipped || s == k
			}
			if !skipped {
				out[k] = strip(x, skip)
			}
		}
		return out
	case []any:
		out := make([]any, len(c))
		for i, x := range c {
			out[i] = strip(x, skip)
		}
		return out
	}
	return v
}
