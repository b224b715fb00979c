package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// This file is the HTTP side of both wires: one pool of connections for
// every Model made without WithClient, sized for a server where one agent
// serves many users at once, and the HTTP client go-openai sends through,
// which puts the body written by hand on the wire, hands a stream's reply
// to the wire to read (sse.go), and reads what go-openai's errors leave
// out (the Retry-After header, an error event in a stream).

// The pool's bounds. go-openai's default client keeps two idle
// connections per host (http.DefaultTransport's default): under a few
// hundred concurrent runs nearly every request dials anew, and the closed
// connections pile up in TIME_WAIT. This pool keeps every connection it
// opens to a host idle for the next request, and opens at most
// maxConnsPerHost of them, as OpenAI's Python SDK does (1,000): more
// requests at once wait for a connection to come free (or their context
// to end) rather than run the process out of file descriptors. A program
// that needs more gives its own client with WithClient.
const (
	maxConnsPerHost     = 1024
	maxIdleConnsPerHost = maxConnsPerHost
	maxIdleConns        = 4 * maxConnsPerHost
)

// builtinHTTPClient is the HTTP client of every Model made without
// WithClient, made on first use and shared, as http.DefaultClient is, so
// that agents made per request still reuse each other's connections.
var builtinHTTPClient = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: newTransport()}
})

// newTransport is http.DefaultTransport's configuration (the proxy from
// the environment, its dial, TLS and idle timeouts, HTTP/2 where the
// server offers it) with a pool sized for concurrency. There is no
// timeout on the reply: a model may think, or stream, for minutes, and
// the caller's context bounds a request.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxConnsPerHost:       maxConnsPerHost,
		MaxIdleConns:          maxIdleConns,
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// CloseIdleConnections closes the idle connections of the pool that every
// Model made without WithClient shares (and so every onion agent with the
// default model); connections in use are left alone, and later requests
// dial again as needed. Call it when a program, or a test checking that no
// goroutine is left, is done with its models. A client given with
// WithClient is the caller's to close.
func CloseIdleConnections() {
	builtinHTTPClient().CloseIdleConnections()
}

// recordingClient returns a client like c whose HTTP requests go through
// a retryAfterRecorder, so that a client given with WithClient has its
// Retry-After and mid-stream errors read too. go-openai keeps a client's
// configuration unexported and offers no way to wrap its HTTP client
// afterwards, so the configuration is copied (see clientConfig); should a
// later go-openai lay its Client out differently, c is used as it is.
func recordingClient(c *goopenai.Client) *goopenai.Client {
	cfg, ok := clientConfig(c)
	if !ok {
		return c
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	cfg.HTTPClient = retryAfterRecorder{inner: cfg.HTTPClient}
	return goopenai.NewClientWithConfig(cfg)
}

// modelError describes err, the failure of a request to api, for the
// agent's retries; an error the server answered names the API and the URL,
// with a hint for a 404.
func modelError(err error, h *retryHint, api string) error {
	me := &loop.ModelError{Err: err, RetryAfter: h.after, Retryable: loop.NetworkRetryable(err)}
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	switch {
	case errors.As(err, &apiErr):
		me.StatusCode = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		me.StatusCode = reqErr.HTTPStatusCode
	}
	if me.StatusCode != 0 {
		me.Retryable = loop.RetryableStatus(me.StatusCode)
		if h.url != "" {
			me.Err = fmt.Errorf("%s at %s: %w%s", api, h.url, err, notFoundHint(me.StatusCode, h.url, api))
		}
	}
	return me
}

// notFoundHint says what a 404 from the model endpoint at url most likely
// means, or "" for another status.
func notFoundHint(status int, url, api string) string {
	switch {
	case status != http.StatusNotFound:
		return ""
	case !strings.Contains(url, "/v1/"):
		return " (the base URL has no /v1: OpenAI-compatible servers answer under it, as in http://localhost:11434/v1; set OPENAI_BASE_URL, or the BaseURL option, with it)"
	case api == "the Responses API":
		return " (the server may not serve the Responses API: use Chat Completions, without the ResponsesAPI option or -responses)"
	}
	return " (check the base URL and the model's name)"
}

// retryAfterRecorder is the HTTP client of both wires: it sends
// the body Generate wrote in place of go-openai's, records the
// Retry-After of a failed response where Generate can read it, since
// go-openai's errors do not carry headers, and hands a stream's body to
// the wire, which reads its events itself.
type retryAfterRecorder struct{ inner goopenai.HTTPDoer }

type retryAfterKey struct{}

// retryHint carries the body Generate wrote to the HTTP layer, and what
// the HTTP layer saw back to Generate: the Retry-After of a failed
// response, the body of a stream's reply, for the wire to read its events,
// and the tail of a stream, where an error event that go-openai cannot
// decode may be read.
type retryHint struct {
	body   net.Buffers // the request's body, nil to send go-openai's
	stream bool        // the request is for a stream: hand its reply's body over
	url    string      // where it went, without its query
	after  time.Duration
	reply  io.Reader // a stream's body, once the server answered
	tail   *tailBuffer
	// keep asks for a copy of a whole reply's body (not a stream's), for
	// the members go-openai does not decode; kept is that copy, nil when
	// it passed keepSize.
	keep bool
	kept []byte
}

// maxReplyBytes and maxStreamBytes bound what is read of a whole reply
// and of a stream (loop.MaxReplyBytes, loop.MaxStreamBytes; variables for
// the tests).
var (
	maxReplyBytes  int64 = loop.MaxReplyBytes
	maxStreamBytes int64 = loop.MaxStreamBytes
)

// keepSize bounds the copy of a reply kept for what go-openai leaves out.
const keepSize = 16 << 20

// keepBuffer copies what is read through it into its hint's kept, up to
// keepSize; past it, it keeps nothing.
type keepBuffer struct {
	io.ReadCloser
	h    *retryHint
	over bool
}

func (k *keepBuffer) Read(p []byte) (int, error) {
	n, err := k.ReadCloser.Read(p)
	if !k.over {
		if len(k.h.kept)+n > keepSize {
			k.over, k.h.kept = true, nil
		} else {
			k.h.kept = append(k.h.kept, p[:n]...)
		}
	}
	return n, err
}

// tailSize is how much of the end of a stream is kept for its error event.
const tailSize = 8 << 10

// tailBuffer keeps the last tailSize bytes read through it, in a ring.
type tailBuffer struct {
	io.ReadCloser
	ring    [tailSize]byte
	written int // bytes read through, in all
}

func (t *tailBuffer) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	b := p[:n]
	if len(b) > tailSize {
		t.written += len(b) - tailSize
		b = b[len(b)-tailSize:]
	}
	at := t.written % tailSize
	k := copy(t.ring[at:], b)
	copy(t.ring[:], b[k:])
	t.written += len(b)
	return n, err
}

// bytes returns the bytes kept, oldest first.
func (t *tailBuffer) bytes() []byte {
	if t.written <= tailSize {
		return t.ring[:t.written]
	}
	at := t.written % tailSize
	return append(t.ring[at:tailSize:tailSize], t.ring[:at]...)
}

// streamError finds the last error event in the stream's tail.
func (h *retryHint) streamError() error {
	if h.tail == nil {
		return nil
	}
	lines := strings.Split(string(h.tail.bytes()), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		data, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "data:")
		if !ok || !strings.Contains(data, `"error"`) {
			continue
		}
		var e goopenai.ErrorResponse
		if json.Unmarshal([]byte(strings.TrimSpace(data)), &e) == nil && e.Error != nil {
			return e.Error
		}
	}
	return nil
}

func withRetryAfter(ctx context.Context) (context.Context, *retryHint) {
	h := &retryHint{}
	return context.WithValue(ctx, retryAfterKey{}, h), h
}

func (r retryAfterRecorder) Do(req *http.Request) (*http.Response, error) {
	h, ok := req.Context().Value(retryAfterKey{}).(*retryHint)
	if ok && h.body != nil {
		swapBody(req, h.body)
	}
	if ok {
		h.url = req.URL.Scheme + "://" + req.URL.Host + req.URL.Path
	}
	resp, err := r.inner.Do(req)
	if err != nil || !ok {
		return resp, err
	}
	stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if resp.Body != nil {
		switch {
		case resp.StatusCode >= 400:
			resp.Body = loop.LimitReply(resp.Body, loop.MaxErrorBodyBytes, true)
		case stream:
			resp.Body = loop.LimitReply(resp.Body, maxStreamBytes, false)
		default:
			resp.Body = loop.LimitReply(resp.Body, maxReplyBytes, false)
		}
	}
	if resp.StatusCode >= 400 {
		h.after = loop.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	} else if stream {
		h.tail = &tailBuffer{ReadCloser: resp.Body}
		resp.Body = h.tail
	} else if h.keep {
		resp.Body = &keepBuffer{ReadCloser: resp.Body, h: h}
	}
	if h.stream {
		h.reply = resp.Body
	}
	return resp, err
}

// swapBody gives req the body Generate wrote, in place of the stub's.
func swapBody(req *http.Request, body net.Buffers) {
	if req.Body != nil {
		req.Body.Close()
	}
	n := 0
	for _, p := range body {
		n += len(p)
	}
	req.ContentLength = int64(n)
	req.GetBody = func() (io.ReadCloser, error) {
		b := slices.Clone(body) // reading consumes the slice
		return io.NopCloser(&b), nil
	}
	req.Body, _ = req.GetBody()
}

// clientConfig returns the configuration of c. go-openai keeps it
// unexported and offers no way to read it, so it is read by reflection;
// should a later go-openai lay its Client out differently, ok is false.
func clientConfig(c *goopenai.Client) (cfg goopenai.ClientConfig, ok bool) {
	v := reflect.ValueOf(c).Elem().FieldByName("config")
	if !v.IsValid() || v.Type() != reflect.TypeFor[goopenai.ClientConfig]() {
		return cfg, false
	}
	return *(*goopenai.ClientConfig)(unsafe.Pointer(v.UnsafeAddr())), true
}

// emptyLimit is c's EmptyMessagesLimit, go-openai's default when its
// configuration cannot be read.
func emptyLimit(c *goopenai.Client) uint {
	cfg, ok := clientConfig(c)
	if !ok {
		cfg = goopenai.DefaultConfig("")
	}
	return cfg.EmptyMessagesLimit
}

// splices reports whether c sends through retryAfterRecorder, which puts
// the bodies written here on the wire. A client it does not (one whose
// configuration could not be read) is sent go-openai's own requests.
func splices(c *goopenai.Client) bool {
	cfg, ok := clientConfig(c)
	if !ok {
		return false
	}
	_, ok = cfg.HTTPClient.(retryAfterRecorder)
	return ok
}
