package devui

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// This file keeps other sites out. The page can run tools, answer
// approvals and read what the agents saw, so a site open in the same
// browser must get nothing:
//
//   - the Host must be a loopback name or one AllowHosts gives, so that
//     a site whose name is made to resolve to 127.0.0.1 (DNS rebinding)
//     is refused, and with it the token in the page;
//   - a request that says where it comes from (Origin, Sec-Fetch-Site)
//     must come from the page's own origin;
//   - every call but the page itself carries the UI's token, which only
//     the page holds (in a header; the event stream, which cannot send
//     headers, in its query);
//   - the page may not be framed (clickjacking an Approve), and runs only
//     its own script, so that a model's text is only ever text.

// tokenHeader is the header the page's calls carry the token in.
const tokenHeader = "X-Onion-Token"

// securityHeaders are sent with every response.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// checkHost refuses a request whose Host is neither a loopback name nor
// one AllowHosts gives.
func (u *UI) checkHost(r *http.Request) error {
	host := hostName(r.Host)
	if loopbackName(host) || slices.Contains(u.set.hosts, "*") ||
		slices.ContainsFunc(u.set.hosts, func(h string) bool { return strings.EqualFold(h, host) }) {
		return nil
	}
	return fmt.Errorf("devui: the host %q is not allowed: open the page at localhost or 127.0.0.1, or allow the name (devui.AllowHosts, onion dev -http-public)", host)
}

// hostName is the name of a Host header, without its port or brackets.
func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// loopbackName reports whether host is localhost or a loopback address.
func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkOrigin refuses a request that says it comes from another origin:
// an Origin header that is not the page's, or a Sec-Fetch-Site other
// than same-origin for anything but a navigation to the page.
func checkOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Errorf("devui: a request from the origin %q is refused: only the page itself may call the UI", o)
		}
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		page := r.Method == http.MethodGet && r.URL.Path == "/" && r.Header.Get("Sec-Fetch-Mode") == "navigate"
		if !page {
			return fmt.Errorf("devui: a %s request is refused: only the page itself may call the UI", site)
		}
	}
	return nil
}

// errToken is the answer to a call without the page's token.
var errToken = errors.New("devui: the call does not carry the page's token: reload the page")

// checkToken refuses a call that does not carry the UI's token: in the
// header, or for the event stream in the query.
func (u *UI) checkToken(r *http.Request, inQuery bool) error {
	got := r.Header.Get(tokenHeader)
	if inQuery && got == "" {
		got = r.URL.Query().Get("token")
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(u.token)) != 1 {
		return errToken
	}
	return nil
}
