package devui

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// maxWire bounds the bytes kept of one request's or reply's body as it
// went over the wire.
const maxWire = 1 << 20

// Transport returns an http.RoundTripper that sends through base
// (http.DefaultTransport when nil) and shows the page the body of each
// model request and of its reply as they went over the wire, beside the
// request and reply in onion's terms, for an agent whose model client
// sends through it: onion.WithClient given a go-openai client whose
// HTTPClient uses it, as onion dev does. No header is kept, so no key
// is; a secret in a body is replaced like everywhere on the page.
// Requests of runs the page did not start go through untouched.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return transport{base}
}

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	sc, st := scopeOf(req.Context()), stepOf(req.Context())
	if sc == nil || st == nil || sc.ui == nil || req.Body == nil {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	// A clone with the body read: the request given is not changed.
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := t.base.RoundTrip(out)
	if err != nil {
		sc.ui.wire(sc.run, st, body, nil)
		return nil, err
	}
	resp.Body = &wireBody{ReadCloser: resp.Body, done: func(reply []byte) { sc.ui.wire(sc.run, st, body, reply) }}
	return resp, nil
}

// wireBody keeps what the client reads of a reply, up to maxWire bytes,
// and hands it over once read to its end or closed.
type wireBody struct {
	io.ReadCloser
	kept bytes.Buffer
	once sync.Once
	done func([]byte)
}

func (w *wireBody) Read(b []byte) (int, error) {
	n, err := w.ReadCloser.Read(b)
	if room := maxWire - w.kept.Len(); room > 0 {
		w.kept.Write(b[:min(n, room)])
	}
	if err != nil {
		w.once.Do(func() { w.done(w.kept.Bytes()) })
	}
	return n, err
}

func (w *wireBody) Close() error {
	w.once.Do(func() { w.done(w.kept.Bytes()) })
	return w.ReadCloser.Close()
}

// wire keeps the bytes of the step's last attempt, scrubbed, within the
// run's bound.
func (u *UI) wire(r *run, st *modelStep, request, reply []byte) {
	request = []byte(u.scrub.text(string(request[:min(len(request), maxWire)])))
	reply = []byte(u.scrub.text(string(reply)))
	u.mu.Lock()
	defer u.mu.Unlock()
	r.bytes -= len(st.wireRequest) + len(st.wireReply)
	st.wireRequest, st.wireReply = nil, nil
	if !u.room(r, len(request)+len(reply)) {
		return
	}
	st.wireRequest, st.wireReply = request, reply
	r.bytes += len(request) + len(reply)
	if !st.Wire {
		st.Wire = true
		u.publish("model", itemEvent{r.ID, st})
	}
}
