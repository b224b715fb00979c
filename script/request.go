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

// reservedHeaders are set by the HTTP client, or would get a response the
// redaction cannot read whole: a range of the body (a credential fetched a
// piece at a time) or a compressed one. Keys are normalised (headerKey).
var reservedHeaders = map[string]bool{
	"host": true, "contentlength": true, "transferencoding": true, "connection": true, "cookie": true,
	"te": true, "trailer": true, "upgrade": true, "range": true, "ifrange": true, "acceptencoding": true,
}

// overrideHeaders name the method an application should act on instead of
// the one sent (normalised names).
var overrideHeaders = map[string]bool{"xhttpmethodoverride": true, "xhttpmethod": true, "xmethodoverride": true}

// overrideParam is the query parameter or body field frameworks (Rails,
// Laravel, Symfony) read as the method to act on.
const overrideParam = "_method"

// request is the request builtin:
// request(method, path, query=None, body=None, headers=None, json=None).
func request(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var (
		method, path            string
		query, bodyArg, jsonArg starlark.Value = starlark.None, starlark.None, starlark.None
		headersArg              starlark.Value = starlark.None
	)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"method", &method, "path", &path, "query?", &query, "body?", &bodyArg, "headers?", &headersArg, "json?", &jsonArg); err != nil {
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
	if err := st.mayUse(method, method); err != nil {
		return nil, err
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if cfg.base == nil {
		return nil, errors.New("no application to send requests to: load the script with script.BaseURL")
	}
	if st.requests >= cfg.maxRequests {
		return nil, &limitError{fmt.Sprintf("%s %s refused: a call may make at most %d requests (script.MaxRequests)", method, path, cfg.maxRequests)}
	}

	u := *cfg.base
	// What the script sends is redacted too: a secret it joined from pieces
	// must not reach the application's other readers (a public comment).
	red := cfg.redactor
	u.Path = strings.TrimSuffix(u.Path, "/") + red.redact(path)
	u.RawPath = ""
	acts := method // the method the application may act on
	if query != starlark.None || len(cfg.query) > 0 {
		q := url.Values{}
		if query != starlark.None {
			var err error
			if q, err = queryValues(query); err != nil {
				return nil, err
			}
			if err := st.checkOverrides("query=", method, q, &acts); err != nil {
				return nil, err
			}
			q = redactValues(red, q)
		}
		for _, own := range cfg.query {
			for name := range q {
				if strings.EqualFold(name, own.name) {
					return nil, fmt.Errorf("query=: %q is set by the runtime and cannot be set by a script", name)
				}
			}
		}
		for _, own := range cfg.query {
			q.Add(own.name, own.value)
		}
		u.RawQuery = q.Encode()
	}

	if jsonArg != starlark.None {
		if bodyArg != starlark.None {
			return nil, errors.New("give json= or body=, not both")
		}
		bodyArg = jsonArg
	}
	var body io.Reader
	contentType := ""
	switch v := bodyArg.(type) {
	case starlark.NoneType:
	case starlark.String, starlark.Bytes:
		text, _ := starlark.AsString(v)
		if err := st.checkOverrides("body=", method, bodyFields(text), &acts); err != nil {
			return nil, err
		}
		body, contentType = strings.NewReader(red.redact(text)), "text/plain; charset=utf-8"
		if _, isBytes := v.(starlark.Bytes); isBytes {
			contentType = "application/octet-stream"
		}
	case *starlark.Dict, *starlark.List, starlark.Tuple:
		if err := chargeText(thread, v, "body="); err != nil {
			return nil, err
		}
		g, err := toGo(v)
		if err != nil {
			return nil, fmt.Errorf("body=: %w", err)
		}
		data, err := json.Marshal(red.goValue(g))
		if err != nil {
			return nil, fmt.Errorf("body=: %w", err)
		}
		if err := st.checkOverrides("body=", method, bodyFields(string(data)), &acts); err != nil {
			return nil, err
		}
		body, contentType = bytes.NewReader(data), "application/json"
	default:
		return nil, fmt.Errorf("body= must be a string, bytes, a dict or a list (sent as JSON), not %s", bodyArg.Type())
	}

	req, err := http.NewRequestWithContext(st.ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if headersArg != starlark.None {
		override, err := st.scriptHeaders(method, headersArg, req.Header)
		if err != nil {
			return nil, err
		}
		if override != "" {
			acts = override
		}
	}
	for _, h := range cfg.headers {
		req.Header.Add(h.name, h.value)
	}

	st.requests++
	if method != "GET" && method != "HEAD" || acts != "GET" && acts != "HEAD" {
		st.mutated = true
	}
	resp, err := cfg.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, redactErr(cfg, err))
	}
	defer resp.Body.Close()
	// Read past the limit by the longest a secret's form can be, so that one
	// across the cut is found and the cut moved before it.
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(cfg.maxResponse)+int64(cfg.redactor.maxSpan())+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the response: %w", method, path, redactErr(cfg, err))
	}
	if err := allocate(thread, int64(len(data)), func() string { return fmt.Sprintf("the body of %s %s", method, path) }); err != nil {
		return nil, err
	}
	r := &response{method: method, path: path, status: resp.StatusCode}
	text := string(data)
	if len(text) > cfg.maxResponse {
		r.body = cut(text, cfg.maxResponse, cfg.redactor.spans(text))
		r.truncated = true
		r.body += fmt.Sprintf("\n[cut: the response body is longer than %d bytes (script.MaxResponseBytes)]", cfg.maxResponse)
	} else {
		r.body = cfg.redactor.redact(text)
	}
	r.headers = newHeaderDict(resp.Header, cfg.redactor)
	remember(clean(thread), r.body)
	return r, nil
}

// mayUse refuses a request sent as method that asks the application to act
// as acts (the same method, or one named by an override) when the tool's
// intent does not allow it.
func (st *callState) mayUse(method, acts string) error {
	acts = strings.ToUpper(strings.TrimSpace(acts))
	if !allowed(acts, st.intent) {
		via := ""
		if acts != method {
			via = " (as a method override)"
		}
		return fmt.Errorf("%s%s is not allowed for a %s tool, which may only %s; declare the intent that fits with an onion:intent line", acts, via, st.intent, strings.Join(allowedMethods[st.intent], ", "))
	}
	return nil
}

// isOverride reports whether a header, query parameter or body field named
// name tells frameworks which method to act as.
func isOverride(name string) bool {
	return strings.EqualFold(name, overrideParam) || overrideHeaders[headerKey(name)]
}

// checkOverrides refuses the method overrides among fields that the tool's
// intent does not allow, and sets acts to the one it allows.
func (st *callState) checkOverrides(where, method string, fields url.Values, acts *string) error {
	for name, values := range fields {
		if !isOverride(name) {
			continue
		}
		for _, v := range values {
			if err := st.mayUse(method, v); err != nil {
				return fmt.Errorf("%s %s=%s: %w", where, name, v, err)
			}
			*acts = strings.ToUpper(strings.TrimSpace(v))
		}
	}
	return nil
}

// bodyFields are the top-level fields of a body that frameworks read
// parameters from: a JSON object's string members, or a form's fields.
func bodyFields(body string) url.Values {
	fields := url.Values{}
	var obj map[string]any
	if json.Unmarshal([]byte(body), &obj) == nil {
		for k, v := range obj {
			if s, ok := v.(string); ok {
				fields.Add(k, s)
			}
		}
		return fields
	}
	if form, err := url.ParseQuery(body); err == nil {
		return form
	}
	return fields
}

// redactValues returns q with its names and values redacted.
func redactValues(red *redactor, q url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		for _, v := range vs {
			out.Add(red.redact(k), red.redact(v))
		}
	}
	return out
}

// limitError is a per-call limit reached: attempt does not catch it.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

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

// headerKey normalises a header name the way servers that merge "-", "_"
// and case do (X_Api_Key, x-api-key and X.Api.Key are one header to some).
func headerKey(name string) string {
	var b strings.Builder
	for _, c := range []byte(name) {
		if isAlnum(c) {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// scriptHeaders adds the script's headers=, refusing the runtime's own and
// any name that normalises to one of them, and method overrides the intent
// does not allow. It returns the override's method, if one was set.
func (st *callState) scriptHeaders(method string, v starlark.Value, h http.Header) (override string, err error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return "", fmt.Errorf("headers= must be a dict, not %s", v.Type())
	}
	for _, kv := range d.Items() {
		name, ok1 := starlark.AsString(kv[0])
		value, ok2 := starlark.AsString(kv[1])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("headers= must map strings to strings")
		}
		if !validHeaderName(name) || strings.ContainsAny(value, "\r\n\x00") {
			return "", fmt.Errorf("headers=: %q is not a valid header", name)
		}
		canon := http.CanonicalHeaderKey(name)
		key := headerKey(name)
		for _, own := range st.cfg.headers {
			if headerKey(own.name) == key {
				return "", fmt.Errorf("headers=: %s is set by the runtime and cannot be set by a script", canon)
			}
		}
		if reservedHeaders[key] {
			return "", fmt.Errorf("headers=: %s cannot be set by a script", canon)
		}
		if isOverride(name) {
			if err := st.mayUse(method, value); err != nil {
				return "", fmt.Errorf("headers=: %s: %w", canon, err)
			}
			override = strings.ToUpper(strings.TrimSpace(value))
		}
		h.Set(canon, st.cfg.redactor.redact(value))
	}
	return override, nil
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func redactErr(cfg *config, err error) error {
	if msg := cfg.redactor.redact(err.Error()); msg != err.Error() {
		return &redactedError{msg, err}
	}
	return err
}

// ok is the ok builtin: ok(response) fails unless the status is 2xx and
// returns what the answer holds: its JSON decoded when its Content-Type
// says JSON, or when the body is a JSON object or array that parses (many
// servers send JSON as text/plain); otherwise its text; None for an empty
// body.
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
	if strings.TrimSpace(r.body) == "" {
		return starlark.None, nil
	}
	body := strings.TrimSpace(r.body)
	switch {
	case r.saysJSON():
		return r.json(thread, b, nil, nil)
	case !r.truncated && (body[0] == '{' || body[0] == '['):
		if err := chargeJSON(thread, r); err != nil {
			return nil, err
		}
		if v, err := decodeJSON([]byte(r.body)); err == nil {
			return v, nil
		}
	}
	return starlark.String(r.body), nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
