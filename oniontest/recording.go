package oniontest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/onionkit/onion/internal/atomicfile"
	"github.com/onionkit/onion/internal/redact"
)

// recordingFormat is the format field of a recording file: its version.
const recordingFormat = "oniontest/recording/1"

// recording is the file Record writes and Playback reads (see the package
// doc for what each field means).
type recording struct {
	Format    string     `json:"format"`
	Volatile  []string   `json:"volatile,omitempty"`
	Exchanges []exchange `json:"exchanges"`
}

// exchange is one request and the reply it got.
type exchange struct {
	Request  recordedRequest  `json:"request"`
	Response recordedResponse `json:"response"`
}

type recordedRequest struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// JSON is the body when it is a JSON document, Body when it is not.
	JSON     json.RawMessage `json:"json,omitempty"`
	Body     string          `json:"body,omitempty"`
	Volatile []string        `json:"volatile,omitempty"`
}

// recordedResponse holds its body in one of three fields: Events, the
// pieces of an event stream (each up to and with its blank line), Body,
// any other text, or BodyBase64, a body that is not UTF-8. Joined, they
// are the body byte for byte.
type recordedResponse struct {
	Status     int               `json:"status"`
	Header     map[string]string `json:"header,omitempty"`
	Events     []string          `json:"events,omitempty"`
	Body       string            `json:"body,omitempty"`
	BodyBase64 []byte            `json:"body_base64,omitempty"`
}

// keptHeaders are the reply headers a recording keeps: those a client
// acts on. Any other (cookies, request IDs, server names) is left out.
var keptHeaders = []string{"Content-Type", "Retry-After", "Retry-After-Ms"}

// keepHeader reports whether a recording keeps the reply header named k
// (canonical): keptHeaders and the rate-limit counters (Anthropic's
// among them).
func keepHeader(k string) bool {
	return slices.Contains(keptHeaders, k) || strings.HasPrefix(k, "X-Ratelimit-") || strings.HasPrefix(k, "Anthropic-Ratelimit-")
}

// newRecordedRequest is r, whose body was raw, as a recording holds it:
// its query with the credentials in it replaced (redactQuery).
func newRecordedRequest(r *http.Request, raw []byte) recordedRequest {
	rr := recordedRequest{Method: r.Method, Path: r.URL.Path, Query: redactQuery(r.URL.RawQuery)}
	if len(bytes.TrimSpace(raw)) > 0 && json.Valid(raw) {
		rr.JSON = raw
	} else {
		rr.Body = string(raw)
	}
	return rr
}

// newRecordedResponse is a reply as a recording holds it.
func newRecordedResponse(status int, header http.Header, body []byte) recordedResponse {
	rr := recordedResponse{Status: status}
	for k, v := range header {
		if keepHeader(http.CanonicalHeaderKey(k)) {
			if rr.Header == nil {
				rr.Header = map[string]string{}
			}
			rr.Header[http.CanonicalHeaderKey(k)] = strings.Join(v, ", ")
		}
	}
	switch {
	case !utf8.Valid(body):
		rr.BodyBase64 = body
	case strings.HasPrefix(header.Get("Content-Type"), "text/event-stream"):
		for _, e := range splitEvents(body) {
			rr.Events = append(rr.Events, string(e))
		}
	default:
		rr.Body = string(body)
	}
	return rr
}

// reply is the recorded reply, to be served as it came: each event of a
// stream flushed on its own.
func (rr recordedResponse) reply() reply {
	h := http.Header{}
	for k, v := range rr.Header {
		h.Set(k, v)
	}
	var pieces [][]byte
	switch {
	case len(rr.Events) > 0:
		for _, e := range rr.Events {
			pieces = append(pieces, []byte(e))
		}
	case len(rr.BodyBase64) > 0:
		pieces = [][]byte{rr.BodyBase64}
	default:
		pieces = [][]byte{[]byte(rr.Body)}
	}
	return reply{status: rr.Status, header: h, pieces: pieces}
}

// maxRecording bounds the size of a recording file read: one a test
// plays back is a few runs' worth of requests and replies.
const maxRecording = 64 << 20

// readRecording reads and checks the recording file at path: a regular
// file of up to maxRecording bytes.
func readRecording(path string) (recording, error) {
	b, err := atomicfile.ReadFile(path, maxRecording)
	if err != nil {
		return recording{}, err
	}
	rec, err := parseRecording(b)
	if err != nil {
		return recording{}, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// parseRecording decodes and checks a recording.
func parseRecording(b []byte) (recording, error) {
	var rec recording
	if err := json.Unmarshal(b, &rec); err != nil {
		return recording{}, err
	}
	if rec.Format != recordingFormat {
		return recording{}, fmt.Errorf("format %q, want %q", rec.Format, recordingFormat)
	}
	for i, ex := range rec.Exchanges {
		if err := ex.check(); err != nil {
			return recording{}, fmt.Errorf("exchange %d: %w", i+1, err)
		}
	}
	if slices.Contains(rec.Volatile, "") {
		return recording{}, errors.New("an empty volatile path")
	}
	return rec, nil
}

func (ex exchange) check() error {
	switch {
	case ex.Request.Method == "" || !strings.HasPrefix(ex.Request.Path, "/"):
		return errors.New("the request needs a method and a path starting with /")
	case ex.Response.Status < 100 || ex.Response.Status > 599:
		return fmt.Errorf("status %d", ex.Response.Status)
	case slices.Contains(ex.Request.Volatile, ""):
		return errors.New("an empty volatile path")
	}
	bodies := 0
	for _, has := range []bool{len(ex.Response.Events) > 0, ex.Response.Body != "", len(ex.Response.BodyBase64) > 0} {
		if has {
			bodies++
		}
	}
	if bodies > 1 {
		return errors.New("the response has more than one of events, body and body_base64")
	}
	return nil
}

// encode is the recording as a file, every secret replaced by
// redact.Mark wherever the file would hold it: the paths, queries and
// bodies of the requests, the header values and bodies of the replies.
func (rec recording) encode(secrets []string) ([]byte, error) {
	red := redact.New(secrets...)
	rec.Exchanges = slices.Clone(rec.Exchanges)
	for i := range rec.Exchanges {
		ex := &rec.Exchanges[i]
		ex.Request = scrubRequest(ex.Request, red)
		ex.Response = scrubResponse(ex.Response, red)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeFile writes b to path whole (atomicfile.Write), making its
// directory first.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b, 0o644)
}
