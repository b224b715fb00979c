package oniontest

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/onionkit/onion/internal/redact"
)

// player is the handler of a Server started by Playback.
type player struct {
	s        *Server
	file     string
	rec      recording
	volatile []string // the file's top-level list and Volatile's
	next     int      // the next exchange to serve; guarded by s.mu
}

// Playback starts a Server that serves the exchanges of a file written by
// [Record], in order, each reply as it was recorded (a stream event by
// event, byte for byte), and closes it when the test ends. Each request
// must be the one recorded: the same method, path and query, and, for a
// JSON body, the same JSON document once the volatile fields (those the
// file lists, at the top or on the request, and those given with
// [Volatile]) are left out on both sides. A request that differs fails
// the test with the fields that differ, and gets a 400 whose message says
// the same; it does not use up its exchange. A request past the last
// exchange fails the test, and so does an exchange never asked for by the
// time the test ends. It stops the test at once if the file cannot be
// read, or is not a regular file of up to 64 MiB. t must not be nil; the
// server serves no steps.
func Playback(t testing.TB, file string, opts ...RecordingOption) *Server {
	t.Helper()
	rec, err := readRecording(file)
	if err != nil {
		t.Fatalf("oniontest: Playback: %v", err)
	}
	var cfg recordingConfig
	for _, o := range opts {
		o(&cfg)
	}
	p := &player{file: file, rec: rec, volatile: append(slices.Clone(rec.Volatile), cfg.volatile...)}
	p.s = newServer(t)
	p.s.start(http.HandlerFunc(p.serveHTTP))
	t.Cleanup(p.checkAllServed) // before the server closes
	return p.s
}

func (p *player) serveHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		send(w, errorReply(http.StatusBadRequest, "oniontest: playback: reading the request: "+err.Error(), "invalid_request_error"), Step{})
		return
	}
	req := Request{Raw: raw, Header: r.Header.Clone()}
	_ = req.decode(r.URL.Path) // compared below as it came
	// Written down as the recorder wrote the one recorded: the request's
	// own keys replaced.
	sent := scrubRequest(newRecordedRequest(r, raw), redact.New(requestSecrets(r, nil)...))

	p.s.mu.Lock()
	n := p.s.keepRequest(req)
	i := p.next
	var diff string
	if i < len(p.rec.Exchanges) {
		diff = requestDiff(p.rec.Exchanges[i].Request, sent, slices.Concat(p.volatile, p.rec.Exchanges[i].Request.Volatile))
		if diff == "" {
			p.next++
		}
	}
	p.s.mu.Unlock()

	var msg string
	switch {
	case i >= len(p.rec.Exchanges):
		msg = fmt.Sprintf("oniontest: playback %s: request #%d (%s %s) comes after the %d recorded", p.file, n, r.Method, r.URL.Path, len(p.rec.Exchanges))
	case diff != "":
		msg = fmt.Sprintf("oniontest: playback %s: request #%d differs from the one recorded in exchange %d:\n%s"+
			"if the change is meant, record the run again, or list the fields that may change under \"volatile\"",
			p.file, n, i+1, diff)
	default:
		send(w, p.rec.Exchanges[i].Response.reply(), Step{})
		return
	}
	p.s.errorf("%s", msg)
	// A 400, which no client retries, ends the run where it went astray.
	send(w, errorReply(http.StatusBadRequest, msg, "invalid_request_error"), Step{})
}

// checkAllServed fails the test if exchanges were never asked for.
func (p *player) checkAllServed() {
	p.s.mu.Lock()
	left := len(p.rec.Exchanges) - p.next
	p.s.mu.Unlock()
	if left > 0 {
		p.s.errorf("oniontest: playback %s: %d of the %d recorded exchanges were never asked for, from exchange %d on",
			p.file, left, len(p.rec.Exchanges), p.next+1)
	}
}
