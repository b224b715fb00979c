package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/onionkit/onion"
	"go.starlark.net/starlark"
)

// callState is one tool call's share of the sandbox, kept in the thread.
// Only the goroutine running the thread touches it.
type callState struct {
	cfg      *config
	ctx      context.Context // the call's context, with the Timeout
	intent   onion.Intent
	requests int
	mutated  bool // a POST, PUT, PATCH or DELETE was sent
}

const stateKey = "onion/script.call"

// allowedMethods lists the methods each intent may send.
var allowedMethods = map[onion.Intent][]string{
	onion.Read:   {"GET", "HEAD"},
	onion.Write:  {"GET", "HEAD", "POST", "PUT", "PATCH"},
	onion.Delete: {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"},
}

// reservedHeaders are set by the HTTP client; a script setting them could
// only confuse the request.
var reservedHeaders = map[string]bool{"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Cookie": true}

// request is the request builtin:
// request(method, path, query=None, json=None, body=None, headers=None).
func request(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var (
		method, path            string
		query, jsonArg, bodyArg starlark.Value = starlark.None, starlark.None, starlark.None
		headersArg              starlark.Value = starlark.None
	)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"method", &method, "path", &path, "query?", &query, "json?", &jsonArg, "body?", &bodyArg, "headers?", &headersArg); err != nil {
		return nil, err
	}
	st, _ := thread.Local(stateKey).(*callState)
	if st == nil {
		return nil, errors.New("request may only be called by a tool, not at the top level of the file")
	}
	cfg := st.cfg
	method = strings.ToUpper(method)
	if !allowed(method, onion.Delete) {
		return nil, fmt.Errorf("method %q is not allowed: use GET, HEAD, POST, PUT, PATCH or DELETE", method)
	}
	if !allowed(method, st.intent) {
		return nil, fmt.Errorf("%s is not allowed for a %s tool, which may only %s; declare the intent that fits with an onion:intent line", method, st.intent, strings.Join(allowedMethods[st.intent], ", "))
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if cfg.base == nil {
		return nil, errors.New("no application to send requests to: load the script with script.BaseURL")
	}
	if st.requests >= cfg.maxRequests {
		return nil, fmt.Errorf("%s %s refused: a call may make at most %d requests (script.MaxRequests)", method, path, cfg.maxRequests)
	}

	u := *cfg.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawPath = ""
	if query != starlark.None {
		q, err := queryValues(query)
		if err != nil {
			return nil, err
		}
		u.RawQuery = q.Encode()
	}

	var body io.Reader
	contentType := ""
	switch {
	case jsonArg != starlark.None && bodyArg != starlark.None:
		return nil, errors.New("give json= or body=, not both")
	case jsonArg != starlark.None:
		g, err := toGo(jsonArg)
		if err != nil {
			return nil, fmt.Errorf("json=: %w", err)
		}
		data, err := json.Marshal(g)
		if err != nil {
			return nil, fmt.Errorf("json=: %w", err)
		}
		body, contentType = bytes.NewReader(data), "application/json"
	case bodyArg != starlark.None:
		s, ok := starlark.AsString(bodyArg)
		if !ok {
			return nil, fmt.Errorf("body= must be a string or bytes, not %s", bodyArg.Type())
		}
		body, contentType = strings.NewReader(s), "text/plain; charset=utf-8"
	}

	req, err := http.NewRequestWithContext(st.ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if headersArg != starlark.None {
		if err := scriptHeaders(cfg, headersArg, req.Header); err != nil {
			return nil, err
		}
	}
	for _, h := range cfg.headers {
		req.Header.Add(h.name, h.value)
	}

	st.requests++
	if method != "GET" && method != "HEAD" {
		st.mutated = true
	}
	resp, err := cfg.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, redactErr(cfg, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(cfg.maxResponse)+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the response: %w", method, path, redactErr(cfg, err))
	}
	r := &response{method: method, path: path, status: resp.StatusCode}
	if len(data) > cfg.maxResponse {
		data = data[:cfg.maxResponse]
		for i := 0; i < utf8.UTFMax-1 && len(data) > 0; i++ { // do not split a character
			if r, size := utf8.DecodeLastRune(data); r != utf8.RuneError || size != 1 {
				break
			}
			data = data[:len(data)-1]
		}
		r.truncated = true
	}
	r.body = redact(cfg, string(data))
	if r.truncated {
		r.body += fmt.Sprintf("\n[cut: the response body is longer than %d bytes (script.MaxResponseBytes)]", cfg.maxResponse)
	}
	r.headers = responseHeaders(cfg, resp.Header)
	return r, nil
}

func allowed(method string, intent onion.Intent) bool {
	for _, m := range allowedMethods[intent] {
		if m == method {
			return true
		}
	}
	return false
}

// checkPath keeps a path inside the application: the URL's scheme and host
// come from BaseURL, and the path may not climb out of BaseURL's path or
// smuggle a query.
func checkPath(path string) error {
	switch {
	case !strings.HasPrefix(path, "/"):
		return fmt.Errorf("path %q must start with /: requests go to the application set with script.BaseURL", path)
	case strings.Contains(path, ".."):
		return fmt.Errorf("path %q must not contain ..: requests stay inside the application set with script.BaseURL", path)
	case strings.ContainsAny(path, "?#"):
		return fmt.Errorf("path %q must not contain ? or #: pass query parameters as query={...}", path)
	case strings.ContainsAny(path, "\\\x00\r\n"):
		return fmt.Errorf("path %q must not contain a backslash or control characters", path)
	}
	return nil
}

// queryValues converts query={...}: each value a string, number or bool, or
// a list of them for a repeated parameter.
func queryValues(v starlark.Value) (url.Values, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("query= must be a dict, not %s", v.Type())
	}
	q := url.Values{}
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("query= keys must be strings, not %s", kv[0].Type())
		}
		vals := []starlark.Value{kv[1]}
		if l, ok := kv[1].(starlark.Indexable); ok && kv[1].Type() != "string" && kv[1].Type() != "bytes" {
			vals = vals[:0]
			for i := range l.Len() {
				vals = append(vals, l.Index(i))
			}
		}
		for _, e := range vals {
			switch e := e.(type) {
			case starlark.String:
				q.Add(k, string(e))
			case starlark.Int, starlark.Float:
				q.Add(k, e.String())
			case starlark.Bool:
				q.Add(k, map[bool]string{true: "true", false: "false"}[bool(e)])
			case starlark.NoneType:
				// a None value leaves the parameter out
			default:
				return nil, fmt.Errorf("query=: %q is a %s; use a string, number, bool or a list of them", k, e.Type())
			}
		}
	}
	return q, nil
}

// scriptHeaders adds the script's headers=, refusing the runtime's own.
func scriptHeaders(cfg *config, v starlark.Value, h http.Header) error {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return fmt.Errorf("headers= must be a dict, not %s", v.Type())
	}
	for _, kv := range d.Items() {
		name, ok1 := starlark.AsString(kv[0])
		value, ok2 := starlark.AsString(kv[1])
		if !ok1 || !ok2 {
			return fmt.Errorf("headers= must map strings to strings")
		}
		if !validHeaderName(name) || strings.ContainsAny(value, "\r\n\x00") {
			return fmt.Errorf("headers=: %q is not a valid header", name)
		}
		canon := http.CanonicalHeaderKey(name)
		for _, own := range cfg.headers {
			if http.CanonicalHeaderKey(own.name) == canon {
				return fmt.Errorf("headers=: %s is set by the runtime and cannot be set by a script", canon)
			}
		}
		if reservedHeaders[canon] {
			return fmt.Errorf("headers=: %s cannot be set by a script", canon)
		}
		h.Set(canon, value)
	}
	return nil
}

// responseHeaders is the dict of response headers a script sees, sorted by
// name, with the runtime's header values redacted.
func responseHeaders(cfg *config, h http.Header) *starlark.Dict {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	d := starlark.NewDict(len(names))
	for _, k := range names {
		_ = d.SetKey(starlark.String(k), starlark.String(redact(cfg, strings.Join(h[k], ", "))))
	}
	d.Freeze()
	return d
}

// redact replaces the runtime's header values in s, in case the application
// echoes them.
func redact(cfg *config, s string) string {
	for _, secret := range cfg.secretValues {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	return s
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func redactErr(cfg *config, err error) error {
	if msg := redact(cfg, err.Error()); msg != err.Error() {
		return &redactedError{msg, err}
	}
	return err
}

// ok is the ok builtin: ok(response) fails unless the status is 2xx and
// returns {"status": int, "body": text, "json": parsed body or None}.
func ok(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var r *response
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &r); err != nil {
		return nil, err
	}
	if r.status < 200 || r.status > 299 {
		excerpt := r.body
		if len(excerpt) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(excerpt[cut]) {
				cut--
			}
			excerpt = excerpt[:cut] + "…"
		}
		msg := fmt.Sprintf("%s %s: status %d %s", r.method, r.path, r.status, http.StatusText(r.status))
		if strings.TrimSpace(excerpt) != "" {
			msg += ": " + strings.TrimSpace(excerpt)
		}
		return nil, errors.New(msg)
	}
	parsed := starlark.Value(starlark.None)
	if !r.truncated && strings.TrimSpace(r.body) != "" {
		if v, err := decodeJSON([]byte(r.body)); err == nil {
			parsed = v
		}
	}
	d := starlark.NewDict(3)
	_ = d.SetKey(starlark.String("status"), starlark.MakeInt(r.status))
	_ = d.SetKey(starlark.String("body"), starlark.String(r.body))
	_ = d.SetKey(starlark.String("json"), parsed)
	return d, nil
}
