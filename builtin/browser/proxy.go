package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"sync"
	"time"

	"github.com/onionkit/onion/builtin/internal/netpolicy"
)

// Headers the proxy sets on its own answers, so that Goto can tell the
// model what happened instead of showing it the proxy's error page: on a 403
// for an address the policy refuses, and on a 502 for an admitted address
// that could not be reached. The values say which address and why. The proxy
// removes these headers from the answers it forwards, so that a site cannot
// forge them (over plain HTTP; HTTPS passes through a tunnel untouched).
const (
	refusedHeader     = "X-Onion-Refused"
	unreachableHeader = "X-Onion-Unreachable"
)

// maxFailures is how many recent failures the proxy remembers for Goto.
const maxFailures = 16

// browserProxy is the forward HTTP proxy on loopback that Chromium sends
// every request through (--proxy-server, with loopback not bypassed). Its
// upstream connections are dialled by netpolicy.Policy.DialContext, so every
// request a page makes — the document, its redirects, subresources, fetch()
// and WebSocket tunnels — reaches only the addresses the policy admits,
// checked after name resolution. Plain HTTP is forwarded; HTTPS and WebSocket
// over TLS are CONNECT tunnels, so the proxy never sees their content.
type browserProxy struct {
	policy    netpolicy.Policy
	ln        net.Listener
	srv       *http.Server
	forward   *httputil.ReverseProxy
	transport *http.Transport
	served    chan struct{} // closed when srv.Serve has returned
	tunnelsWG sync.WaitGroup

	mu       sync.Mutex // guards the fields below
	closed   bool
	tunnels  map[net.Conn]struct{} // both ends of every open CONNECT tunnel
	seq      uint64                // number of failures so far
	failures []proxyFailure        // the latest maxFailures, oldest first
}

// proxyFailure is one request the proxy could not pass on.
type proxyFailure struct {
	seq     uint64
	host    string // the host name asked for, without the port
	refused bool   // by the address policy; otherwise the address was unreachable
	err     error  // what happened, naming the address
}

// startBrowserProxy listens on a loopback port and serves until close.
func startBrowserProxy(policy netpolicy.Policy) (*browserProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the browser's proxy: %w", err)
	}
	p := &browserProxy{
		policy: policy,
		ln:     ln,
		served: make(chan struct{}),
		transport: &http.Transport{
			DialContext:         policy.DialContext,
			DisableCompression:  true, // pass the page's own Accept-Encoding through untouched
			MaxIdleConns:        64,
			IdleConnTimeout:     30 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
		},
		tunnels: make(map[net.Conn]struct{}),
	}
	quiet := log.New(io.Discard, "", 0)
	p.forward = &httputil.ReverseProxy{
		// The request already carries the absolute URL Chromium asked for;
		// Rewrite (rather than Director) also drops X-Forwarded-* headers.
		Rewrite:        func(*httputil.ProxyRequest) {},
		Transport:      p.transport,
		ModifyResponse: scrub,
		ErrorHandler:   p.fail,
		ErrorLog:       quiet,
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          quiet,
	}
	go func() {
		defer close(p.served)
		p.srv.Serve(ln) // returns http.ErrServerClosed after close
	}()
	return p, nil
}

// url is the value for Chromium's --proxy-server flag.
func (p *browserProxy) url() string { return "http://" + p.ln.Addr().String() }

// ServeHTTP forwards absolute http:// requests and tunnels CONNECT.
func (p *browserProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.tunnel(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		p.forward.ServeHTTP(w, r)
	default:
		http.Error(w, "this is the browser's forward proxy; it takes only absolute http:// requests and CONNECT", http.StatusBadRequest)
	}
}

// fail answers a forwarded request whose upstream failed. It answers even
// when the request's context has ended: a handler that writes nothing sends
// an empty 200, which a browser still waiting would show as a blank page
// that loaded.
func (p *browserProxy) fail(w http.ResponseWriter, r *http.Request, err error) {
	p.failed(w, r.URL.Host, err)
}

// failed records a failure to reach host and answers it: 403 when the
// policy refused the address, 502 otherwise.
func (p *browserProxy) failed(w http.ResponseWriter, host string, err error) {
	f := proxyFailure{host: host, err: err}
	if h, _, err := net.SplitHostPort(host); err == nil {
		f.host = h
	}
	var refused *netpolicy.AddressError
	if errors.As(err, &refused) {
		f.refused, f.err = true, refused // the policy's own words name the address
	} else {
		f.err = fmt.Errorf("could not reach %s: %w", host, err)
	}
	p.mu.Lock()
	p.seq++
	f.seq = p.seq
	p.failures = append(p.failures, f)
	if len(p.failures) > maxFailures {
		p.failures = p.failures[len(p.failures)-maxFailures:]
	}
	p.mu.Unlock()
	if f.refused {
		w.Header().Set(refusedHeader, f.err.Error())
		http.Error(w, "refused by the browser's address policy: "+f.err.Error(), http.StatusForbidden)
		return
	}
	w.Header().Set(unreachableHeader, f.err.Error())
	http.Error(w, f.err.Error(), http.StatusBadGateway)
}

// scrub removes the proxy's own headers from a forwarded answer.
func scrub(resp *http.Response) error {
	resp.Header.Del(refusedHeader)
	resp.Header.Del(unreachableHeader)
	return nil
}

// mark returns a point in the failure history for failedSince.
func (p *browserProxy) mark() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// failedSince returns the first failure recorded after mark for one of the
// host names, or nil.
func (p *browserProxy) failedSince(mark uint64, hosts []string) *proxyFailure {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.failures {
		if f.seq > mark && slices.Contains(hosts, f.host) {
			return &f
		}
	}
	return nil
}

// tunnel serves CONNECT: dial the target through the policy, then copy bytes
// both ways until either side closes or the proxy closes.
func (p *browserProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	dctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	upstream, err := p.policy.DialContext(dctx, "tcp", host)
	cancel()
	if err != nil {
		p.failed(w, host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "CONNECT is not supported on this connection", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if !p.track(client, upstream) {
		client.Close()
		upstream.Close()
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		p.untrack(client, upstream)
		return
	}
	p.tunnelsWG.Add(1)
	go func() {
		defer p.tunnelsWG.Done()
		defer p.untrack(client, upstream)
		copied := make(chan struct{})
		go func() {
			defer close(copied)
			// buf.Reader holds whatever Chromium sent after the CONNECT
			// line, such as the TLS ClientHello.
			io.Copy(upstream, buf.Reader)
			upstream.Close()
			client.Close()
		}()
		io.Copy(client, upstream)
		client.Close()
		upstream.Close()
		<-copied
	}()
}

// track registers a tunnel's connections so that close can end them; it
// reports false when the proxy is already closed.
func (p *browserProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

// untrack closes a tunnel's connections and forgets them.
func (p *browserProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		c.Close()
		delete(p.tunnels, c)
	}
}

// close stops the listener, ends every request and tunnel, and waits for the
// proxy's goroutines. Chromium is gone by then, so nothing is cut short that
// anyone still reads.
func (p *browserProxy) close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		err = p.srv.Close()
	}
	<-p.served
	p.tunnelsWG.Wait()
	p.transport.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("stop the browser's proxy: %w", err)
	}
	return nil
}
