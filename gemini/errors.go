package gemini

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/onionkit/onion/loop"
)

// This file is what goes wrong: the HTTP transport under genai, which
// bounds replies and keeps what the error of a failed request needs (the
// URL, the Retry-After header), and the mapping of a failure to a
// *loop.ModelError that says whether to send the request again. The API
// key never reaches an error: genai sends it in a header, the URLs kept
// have no query, and every message is scrubbed of it besides.

// maxReply bounds the body of one reply, a whole stream included: a
// model's answer is a few hundred kilobytes at most.
const maxReply = 32 << 20

// maxMessage bounds the server's words kept in an error.
const maxMessage = 2000

// placeholderKey is what genai is given as the key of a Model with a base
// URL and no key: genai wants one, and the transport takes it off.
const placeholderKey = "onion-gemini-no-key"

// exchange is what the transport saw of one request, for its error.
type exchange struct {
	mu     sync.Mutex // guards the fields below
	method string
	url    string // scheme, host and path: no query
	status int
	header http.Header
}

type exchangeKey struct{}

// transport is the RoundTripper under genai.
type transport struct {
	base http.RoundTripper
	key  string // the API key; "" when requests carry none
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.key == "" && r.Header.Get("X-Goog-Api-Key") != "" {
		r = r.Clone(r.Context())
		r.Header.Del("X-Goog-Api-Key")
	}
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if x != nil {
		u := *r.URL
		u.RawQuery, u.Fragment, u.User = "", "", nil
		x.mu.Lock()
		x.method, x.url = r.Method, u.String()
		x.mu.Unlock()
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if x != nil {
		x.mu.Lock()
		x.status, x.header = resp.StatusCode, resp.Header.Clone()
		x.mu.Unlock()
	}
	resp.Body = loop.LimitReply(resp.Body, maxReply, false)
	return resp, nil
}

// retryStatuses are the statuses of google.rpc.Code that may pass when
// the request is sent again, for an error that came without an HTTP
// status (in a stream).
var retryStatuses = map[string]bool{
	"RESOURCE_EXHAUSTED": true, "UNAVAILABLE": true, "INTERNAL": true, "DEADLINE_EXCEEDED": true,
}

// apiError is a failed request in the API's words: its Error names the
// API, the URL, the status and the message, bounded and scrubbed; Unwrap
// reaches genai's error.
type apiError struct {
	msg   string
	cause error
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.cause }

// failure is err, the failure of a request to model, as a ModelError.
func (m *Model) failure(ctx context.Context, x *exchange, model string, stream bool, err error) error {
	x.mu.Lock()
	method, url, status, header := x.method, x.url, x.status, x.header
	x.mu.Unlock()
	if url == "" {
		method, url = http.MethodPost, strings.TrimSuffix(m.base, "/")+"/v1beta/models/"+model+":generateContent"
		if stream {
			url = strings.TrimSuffix(url, ":generateContent") + ":streamGenerateContent"
		}
	}
	where := "gemini: " + method + " " + url
	key := m.keyInUse()
	if ctxErr := ctx.Err(); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return &loop.ModelError{Err: fmt.Errorf("%s: %w", where, ctxErr)}
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		code := ae.Code
		if code == 0 && status >= 400 {
			code = status
		}
		state := ae.Status
		if code != 0 && strings.HasPrefix(state, strconv.Itoa(code)+" ") {
			state = "" // genai's "429 Too Many Requests" for a body that was no API error
		}
		msg := where + ": " + strconv.Itoa(code)
		if state != "" {
			msg += " " + state
		}
		if text := strings.TrimSpace(ae.Message); text != "" {
			msg += ": " + bound(text)
		}
		me := &loop.ModelError{
			StatusCode: code,
			Retryable:  loop.RetryableStatus(code) || retryStatuses[state],
			RetryAfter: retryDelay(ae.Details),
			Err:        &apiError{msg: redactKey(msg, key), cause: err},
		}
		if me.RetryAfter == 0 && status == code && header != nil {
			me.RetryAfter = loop.ParseRetryAfter(header.Get("Retry-After"), time.Now())
		}
		return me
	}
	me := &loop.ModelError{Retryable: loop.NetworkRetryable(err) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errMalformedCall)}
	if status >= 400 {
		me.StatusCode = status
	}
	if errors.Is(err, loop.ErrReplyTooLarge) {
		me.Retryable = false
	}
	me.Err = &apiError{msg: redactKey(where+": "+bound(err.Error()), key), cause: err}
	return me
}

// keyInUse is the key genai sends, this Model's or that of a client of
// the program's: no error may hold it.
func (m *Model) keyInUse() string {
	if m.client == nil {
		return ""
	}
	return m.client.ClientConfig().APIKey
}

// retryDelay reads google.rpc.RetryInfo among an error's details: its
// retryDelay, a protobuf Duration in JSON ("37s", "1.5s"). 0 when none.
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		secs, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "s"), 64)
		if err != nil || math.IsNaN(secs) || secs <= 0 {
			continue
		}
		if secs >= math.MaxInt64/float64(time.Second) {
			return math.MaxInt64
		}
		return time.Duration(secs * float64(time.Second))
	}
	return 0
}

// bound is s cut to maxMessage bytes, on a rune boundary.
func bound(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// redactKey is s with every key (of 8 bytes or more) replaced.
func redactKey(s string, keys ...string) string {
	for _, k := range keys {
		if len(k) >= 8 && k != placeholderKey {
			s = strings.ReplaceAll(s, k, "[redacted]")
		}
	}
	return s
}
