package oniontest

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// RecordingOption configures [Record] and [Playback].
type RecordingOption func(*recordingConfig)

type recordingConfig struct {
	volatile []string
}

// Volatile marks request fields that may differ between the recorded run
// and the one played back, as paths into the request's JSON body: keys
// joined by dots, array elements by index, "*" for any key or element
// ("metadata.trace_id", "messages.*.name"). Given to Record, the paths go
// into the file's top-level "volatile" list; given to Playback, they are
// ignored on top of those the file lists.
func Volatile(paths ...string) RecordingOption {
	return func(c *recordingConfig) { c.volatile = append(c.volatile, paths...) }
}

// recorder is the handler of a Server started by Record.
type recorder struct {
	s         *Server
	file      string
	upstream  *url.URL
	transport *http.Transport

	mu      sync.Mutex // guards the fields below and the writes of file
	rec     recording  // exchanges in the order their requests came
	done    []bool     // done[i]: the reply of exchange i has been read
	secrets []string   // every key a client sent
}

// Record starts a Server that forwards every request to upstreamURL, the
// base URL a client would use for the real endpoint (such as
// "https://api.openai.com/v1"), passes its reply back as it comes, stream
// or not, and writes both to file (see the package doc for its format)
// for [Playback] to serve. The file is written again after each reply, and
// a last time by Close, when the test ends or before: only then does it
// surely hold the end of every stream, since a client may stop reading at
// the end it knows ("data: [DONE]") before the recorder reads the body's.
// The directory is made if need be.
//
// The client's headers go upstream, its API key with them, but no request
// header is written. A query parameter whose name says it holds a
// credential (key, api_key, api-key, apikey, access_token, token,
// subscription-key, client_secret, password, code, sig, signature, any
// X-Amz-*, and any name holding "key", "token", "secret", "passw",
// "signature", "credential", "auth" or "session") is written with
// "[redacted]" for its value, and Playback compares it so. Every secret
// the request carries (the Authorization header's credentials, the value
// of any header so named, such as Api-Key, X-Api-Key, X-Goog-Api-Key or
// Cookie, and of any such parameter, in the request's query or
// upstreamURL's) is replaced by "[redacted]" wherever else it appears:
// the path, the query, the bodies and the reply headers kept. It is found
// as it is, in any case, hex, base64, JSON- or URL-escaped, and cut short:
// any run of 12 of its bytes is. A stream is searched whole, and so is the
// text its events spread over several (a reply's content, a tool call's
// arguments), so that a key sent a few characters an event is found too.
// The reply headers kept are Content-Type, Retry-After, Retry-After-Ms,
// X-Ratelimit-* and Anthropic-Ratelimit-*. Keys shorter than 8 bytes are
// left alone, being no secret.
//
// If file already holds a recording, its top-level "volatile" list is
// kept, so that fields marked by hand stay marked when a run is recorded
// again. A request upstream fails the test and gets a 502 when it cannot
// be sent; a reply upstream, error or not, is recorded as it is. t must
// not be nil; the server serves no steps.
func Record(t testing.TB, upstreamURL, file string, opts ...RecordingOption) *Server {
	t.Helper()
	u, err := url.Parse(upstreamURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Fatalf("oniontest: Record: the upstream %q is not an http or https URL", upstreamURL)
	}
	var cfg recordingConfig
	for _, o := range opts {
		o(&cfg)
	}
	rc := &recorder{
		file: file, upstream: u,
		transport: http.DefaultTransport.(*http.Transport).Clone(),
		rec:       recording{Format: recordingFormat},
	}
	if old, err := readRecording(file); err == nil {
		rc.rec.Volatile = old.Volatile
	}
	for _, p := range cfg.volatile {
		if !slices.Contains(rc.rec.Volatile, p) {
			rc.rec.Volatile = append(rc.rec.Volatile, p)
		}
	}
	rc.s = newServer(t)
	rc.s.onClose = rc.close
	rc.s.start(http.HandlerFunc(rc.serveHTTP))
	return rc.s
}

// close writes the file a last time, once every reply has been read to
// its end: a client may have what it wanted of a stream before the
// recorder has read its end.
func (rc *recorder) close() {
	rc.transport.CloseIdleConnections()
	if err := rc.write(); err != nil {
		rc.s.t.Errorf("oniontest: record: writing %s: %v", rc.file, err)
	}
}

func (rc *recorder) serveHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		send(w, errorReply(http.StatusBadRequest, "oniontest: record: reading the request: "+err.Error(), "invalid_request_error"), Step{})
		return
	}
	req := Request{Raw: raw, Header: r.Header.Clone()}
	_ = req.decode(r.URL.Path) // a body that is no request is forwarded all the same
	rc.s.mu.Lock()
	n := rc.s.keepRequest(req)
	rc.s.mu.Unlock()

	i := rc.begin(newRecordedRequest(r, raw), requestSecrets(r, rc.upstream))
	r.Body = io.NopCloser(bytes.NewReader(raw))
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = rc.target(pr.In.URL)
			pr.Out.Host = ""
			// Left to the transport, compression is undone before the
			// body is recorded.
			pr.Out.Header.Del("Accept-Encoding")
		},
		Transport: rc.transport,
		ModifyResponse: func(resp *http.Response) error {
			resp.Body = &tee{ReadCloser: resp.Body, done: func(body []byte) {
				rc.finish(i, newRecordedResponse(resp.StatusCode, resp.Header, body))
			}}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			msg := fmt.Sprintf("oniontest: record: request #%d upstream: %v", n, err)
			rc.s.errorf("%s", msg)
			send(w, errorReply(http.StatusBadGateway, msg, "server_error"), Step{})
		},
		ErrorLog: log.New(io.Discard, "", 0), // a client gone mid-stream is no failure of the test
	}
	proxy.ServeHTTP(w, r)
}

// target is the upstream URL of a request to the recorder: the path after
// the recorder's /v1 appended to the upstream's, the queries joined.
func (rc *recorder) target(in *url.URL) *url.URL {
	u := *rc.upstream
	path := in.Path
	if path == "/v1" || strings.HasPrefix(path, "/v1/") {
		path = path[len("/v1"):]
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawPath = ""
	switch {
	case u.RawQuery == "":
		u.RawQuery = in.RawQuery
	case in.RawQuery != "":
		u.RawQuery += "&" + in.RawQuery
	}
	return &u
}

// begin adds an exchange for a request and returns its index.
func (rc *recorder) begin(req recordedRequest, keys []string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, k := range keys {
		if !slices.Contains(rc.secrets, k) {
			rc.secrets = append(rc.secrets, k)
		}
	}
	rc.rec.Exchanges = append(rc.rec.Exchanges, exchange{Request: req})
	rc.done = append(rc.done, false)
	return len(rc.rec.Exchanges) - 1
}

// finish fills in the reply of exchange i and writes the file.
func (rc *recorder) finish(i int, resp recordedResponse) {
	rc.mu.Lock()
	rc.rec.Exchanges[i].Response = resp
	rc.done[i] = true
	rc.mu.Unlock()
	if err := rc.write(); err != nil {
		rc.s.errorf("oniontest: record: writing %s: %v", rc.file, err)
	}
}

// write writes the exchanges whose replies have been read, in order.
func (rc *recorder) write() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rec := rc.rec
	rec.Exchanges = []exchange{}
	for i, ex := range rc.rec.Exchanges {
		if rc.done[i] {
			rec.Exchanges = append(rec.Exchanges, ex)
		}
	}
	b, err := rec.encode(rc.secrets)
	if err != nil {
		return err
	}
	return writeFile(rc.file, b)
}

// tee keeps a copy of what is read through it and hands it to done when it
// is closed.
type tee struct {
	io.ReadCloser
	buf  bytes.Buffer
	once sync.Once
	done func([]byte)
}

func (t *tee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.buf.Write(p[:n])
	return n, err
}

func (t *tee) Close() error {
	err := t.ReadCloser.Close()
	t.once.Do(func() { t.done(t.buf.Bytes()) })
	return err
}
