package onion

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// This file is the HTTP transport of the built-in client: one pool of
// connections for every agent made without WithClient, sized for a server
// where one agent serves many users at once.

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

// builtinHTTPClient is the HTTP client of every built-in wire, made on
// first use and shared, as http.DefaultClient is, so that agents made per
// request still reuse each other's connections.
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

// CloseIdleConnections closes the idle connections of the built-in
// client, the pool that every agent made without WithClient shares;
// connections in use are left alone, and later requests dial again as
// needed. Call it when a program, or a test checking that no goroutine is
// left, is done with its agents. A client given with WithClient is the
// caller's to close.
func CloseIdleConnections() {
	builtinHTTPClient().CloseIdleConnections()
}
