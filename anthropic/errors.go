package anthropic

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/onionkit/onion/loop"
)

// This file describes a failed request as a *loop.ModelError: the API and
// its URL named, the server's own words (cut short, the key never in
// them), what to do when there is a fix, and whether to send it again.

// Bounds on what is read of a reply.
const (
	maxErrorText = 1024 // the server's message kept in an error
)

// errorStatus is the HTTP status Anthropic documents for each error type,
// for an error event in a stream, which comes with a 200.
var errorStatus = map[string]int{
	"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
	"permission_error": 403, "not_found_error": 404, "request_too_large": 413,
	"rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529,
}

// hint is what the HTTP layer saw of one request, for its error: where it
// went and the credentials it carried, to keep out of the error's text.
type hint struct {
	url     string
	secrets []string
}

// middleware records the request's URL and credentials and bounds the
// reply's body.
func (h *hint) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	h.url = req.URL.Scheme + "://" + req.URL.Host + req.URL.Path
	for _, name := range []string{"X-Api-Key", "Authorization", "Api-Key"} {
		v := strings.TrimSpace(req.Header.Get(name))
		if _, tok, ok := strings.Cut(v, " "); ok && name == "Authorization" {
			v = strings.TrimSpace(tok)
		}
		if len(v) >= 8 {
			h.secrets = append(h.secrets, v)
		}
	}
	resp, err := next(req)
	if resp != nil && resp.Body != nil {
		if resp.StatusCode >= 400 {
			// An error's body is cut short, so that its status still tells
			// the error.
			resp.Body = loop.LimitReply(resp.Body, loop.MaxErrorBodyBytes, true)
		} else {
			resp.Body = loop.LimitReply(resp.Body, loop.MaxReplyBytes, false)
		}
	}
	return resp, err
}

// requestError is a failed request in onion's words, wrapping the SDK's
// error.
type requestError struct {
	msg string
	err error
}

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Unwrap() error { return e.err }

// modelError describes err, the failure of a request; spoke says text
// had gone to the caller, which a new request would send again.
func (m *Model) modelError(err error, h *hint, spoke bool) error {
	where := "the Anthropic Messages API"
	if u := h.url; u != "" {
		where += " at " + u
	} else if m.endpoint != "" {
		where += " at " + m.endpoint
	}
	me := &loop.ModelError{Retryable: loop.NetworkRetryable(err) && !spoke}
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		me.Err = &requestError{msg: h.redact(where + ": " + err.Error()), err: err}
		return me
	}
	typ := string(apiErr.Type())
	text := apiErr.Message
	if text == "" && typ == "" {
		text = strings.TrimSpace(apiErr.RawJSON())
	}
	text = h.redact(capText(text))
	if apiErr.StatusCode >= 400 {
		me.StatusCode = apiErr.StatusCode
		me.Retryable = loop.RetryableStatus(me.StatusCode)
		if apiErr.Response != nil {
			me.RetryAfter = retryAfter(apiErr.Response.Header)
		}
		msg := fmt.Sprintf("%s: %d %s", where, me.StatusCode, http.StatusText(me.StatusCode))
		if typ != "" {
			msg += " (" + typ + ")"
		}
		if text != "" {
			msg += ": " + text
		}
		me.Err = &requestError{msg: msg + advice(me.StatusCode), err: err}
		return me
	}
	// An error event in a stream that began with a 200.
	me.StatusCode = errorStatus[typ]
	me.Retryable = (me.StatusCode == 0 || loop.RetryableStatus(me.StatusCode)) && !spoke
	msg := fmt.Sprintf("%s: the stream reported an error", where)
	if typ != "" {
		msg += " (" + typ + ")"
	}
	if text != "" {
		msg += ": " + text
	}
	me.Err = &requestError{msg: msg, err: err}
	return me
}

// advice says what to do about a failure with status, when there is
// something to do.
func advice(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "; check the API key (ANTHROPIC_API_KEY or anthropic.APIKey)"
	case http.StatusForbidden:
		return "; the API key may not use this model or feature"
	case http.StatusNotFound:
		return "; check the model's name and the base URL (ANTHROPIC_BASE_URL is the URL before /v1/messages)"
	case 529:
		return "; the API is overloaded: try again later"
	}
	return ""
}

// retryAfter is how long a reply asked to wait: retry-after-ms, else
// retry-after.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms >= 0 && ms < 1e12 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	return loop.ParseRetryAfter(h.Get("Retry-After"), time.Now())
}

// redact replaces the request's credentials in s.
func (h *hint) redact(s string) string {
	for _, k := range h.secrets {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	return s
}

// capText cuts s to maxErrorText bytes, on a rune boundary.
func capText(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	i := maxErrorText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
