// Package netpolicy decides which addresses the tools that reach the web
// may connect to: web_fetch and the browser dial only public internet
// addresses, checked after name resolution, plus the ranges a program
// admits.
package netpolicy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/idna"
)

// Policy decides which IP addresses outbound connections may reach.
//
// The zero value admits only public internet addresses. Prefixes in Allow
// are admitted even when they are private (tests use 127.0.0.0/8 for
// httptest servers); nothing else opens the door.
type Policy struct{ Allow []netip.Prefix }

// AddressError is the refusal of one IP address, saying which and why.
type AddressError struct {
	Addr   netip.Addr // the address refused
	Reason string     // why, such as "loopback"
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("address %s refused: %s; only public internet addresses may be reached", e.Addr, e.Reason)
}

// blockedRange is a range of addresses that is not the public internet.
type blockedRange struct {
	prefix netip.Prefix
	reason string
}

// blockedRanges lists the non-public ranges, most specific first so that
// the reason given is the most telling one. IPv6 addresses outside
// 2000::/3 are refused after this list as well (see Check).
var blockedRanges = func() []blockedRange {
	raw := []struct{ prefix, reason string }{
		// IPv4.
		{"169.254.169.254/32", "link-local (cloud metadata service)"},
		{"0.0.0.0/8", "unspecified (\"this network\")"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared address space (carrier-grade NAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "reserved (IETF protocol assignments)"},
		{"192.0.2.0/24", "reserved (documentation)"},
		{"192.88.99.0/24", "reserved (6to4 relay anycast)"},
		{"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "reserved (benchmarking)"},
		{"198.51.100.0/24", "reserved (documentation)"},
		{"203.0.113.0/24", "reserved (documentation)"},
		{"224.0.0.0/4", "multicast"},
		{"255.255.255.255/32", "broadcast"},
		{"240.0.0.0/4", "reserved"},
		// IPv6.
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"::/96", "IPv4-compatible IPv6 (deprecated)"},
		{"::ffff:0:0:0/96", "IPv4-translated IPv6"},
		{"64:ff9b::/96", "NAT64 (embeds an IPv4 address)"},
		{"64:ff9b:1::/48", "local-use NAT64 (embeds an IPv4 address)"},
		{"100::/64", "discard-only"},
		{"2001::/32", "Teredo tunnelling (embeds an IPv4 address)"},
		{"2001:db8::/32", "reserved (documentation)"},
		{"2001::/23", "reserved (IETF protocol assignments)"},
		{"2002::/16", "6to4 (embeds an IPv4 address)"},
		{"3fff::/20", "reserved (documentation)"},
		{"5f00::/16", "reserved (segment routing)"},
		{"fc00::/7", "unique-local (private)"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local (deprecated, private)"},
		{"ff00::/8", "multicast"},
	}
	out := make([]blockedRange, len(raw))
	for i, r := range raw {
		out[i] = blockedRange{netip.MustParsePrefix(r.prefix), r.reason}
	}
	return out
}()

// globalUnicast6 is the only IPv6 block allocated for public unicast.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// Check returns nil if ip may be reached, or an *AddressError naming the
// address and why it is refused. IPv4-mapped IPv6 addresses
// (::ffff:127.0.0.1) are judged as the IPv4 address they carry.
func (p Policy) Check(ip netip.Addr) error {
	if !ip.IsValid() {
		return &AddressError{ip, "not a valid IP address"}
	}
	orig := ip
	ip = ip.WithZone("").Unmap()
	for _, a := range p.Allow {
		if a.Contains(ip) || a.Contains(orig.WithZone("")) {
			return nil
		}
	}
	mapped := ""
	if orig.Is4In6() {
		mapped = "IPv4-mapped " + ip.String() + " is "
	}
	for _, b := range blockedRanges {
		if b.prefix.Contains(ip) {
			return &AddressError{orig, mapped + b.reason}
		}
	}
	if ip.Is6() && !globalUnicast6.Contains(ip) {
		return &AddressError{orig, "not in the global unicast range 2000::/3"}
	}
	return nil
}

// DialContext dials addr like net.Dialer.DialContext, but every IP the
// dialer actually connects to is checked in the socket's Control hook,
// after name resolution. A name that resolves (or re-resolves, as in DNS
// rebinding) to a refused address therefore cannot be reached. Only TCP and
// UDP networks are dialled.
func (p Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
	default:
		return nil, fmt.Errorf("dial %s %s: network %q is not allowed; use tcp", network, addr, network)
	}
	d := net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   p.control,
	}
	return d.DialContext(ctx, network, addr)
}

// control is a net.Dialer.Control hook: address is the resolved "ip:port"
// about to be connected to.
func (p Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s %s: cannot check address: %w", network, address, err)
	}
	return p.Check(ap.Addr())
}

// CheckURL parses raw and refuses what must not be fetched: schemes other
// than http and https, user info, a missing host, and hosts that are (or
// spell) a refused IP address. Numeric hosts are read the way browsers and
// inet_aton read them — 2130706433, 0x7f.1, 0177.0.0.1 and 127.0.0.1. are
// all 127.0.0.1 — and the returned URL carries the canonical dotted form,
// so nothing downstream can read them differently. Internationalised names
// are converted to their ASCII (punycode) form as net/http would. Host
// names are not resolved here: DialContext checks the resolved addresses.
func (p Policy) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("invalid url: %w", err)
	}
	shown := u.Redacted()
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		u.Scheme = strings.ToLower(u.Scheme)
	case "":
		return nil, fmt.Errorf("url %q has no scheme; use an absolute http:// or https:// url", shown)
	default:
		return nil, fmt.Errorf("url %q: scheme %q is not allowed; only http and https are", shown, u.Scheme)
	}
	if u.Opaque != "" {
		return nil, fmt.Errorf("url %q is not a hierarchical url; use http://host/path", shown)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q: user info (user:password@) is not allowed", shown)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("url %q has no host", shown)
	}
	port := u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("url %q: invalid port %q", shown, port)
		}
	}

	var canon string
	if strings.HasPrefix(u.Host, "[") {
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() {
			return nil, fmt.Errorf("url %q: invalid IPv6 host %q", shown, host)
		}
		if ip.Zone() != "" {
			return nil, fmt.Errorf("url %q: IPv6 zones are not allowed", shown)
		}
		if err := p.Check(ip); err != nil {
			return nil, fmt.Errorf("url %q: %w", shown, err)
		}
		canon = "[" + ip.String() + "]"
	} else {
		ascii := strings.ToLower(host)
		if !isASCIIHost(host) {
			// The conversion net/http applies before dialling; done here
			// so that full-width digits cannot hide a numeric host.
			a, err := idna.Lookup.ToASCII(host)
			if err != nil {
				return nil, fmt.Errorf("url %q: invalid host name %q: %w", shown, host, err)
			}
			ascii = strings.ToLower(a)
		}
		if endsInNumber(ascii) {
			ip, ok := parseIPv4Loose(ascii)
			if !ok {
				return nil, fmt.Errorf("url %q: host %q looks like an IPv4 address but is not a valid one", shown, host)
			}
			if err := p.Check(ip); err != nil {
				return nil, fmt.Errorf("url %q: %w", shown, err)
			}
			canon = ip.String()
		} else {
			if strings.ContainsAny(ascii, ":[]%") {
				return nil, fmt.Errorf("url %q: invalid host name %q", shown, host)
			}
			canon = ascii
		}
	}
	if port != "" {
		canon += ":" + port
	}
	u.Host = canon
	return u, nil
}

// endsInNumber reports whether a host is to be read as an IPv4 address, as
// the WHATWG URL standard decides it: its last label (ignoring one trailing
// dot) is all decimal digits or a 0x-prefixed hex number.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if isIPv4Digits(last, 10) {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return last == "0x" || last == "0X" || isIPv4Digits(last[2:], 16)
	}
	return false
}

// parseIPv4Loose parses an IPv4 address the way inet_aton and browsers do:
// one to four parts, each decimal, octal (leading 0) or hex (0x); the last
// part fills the remaining bytes. One trailing dot is allowed.
func parseIPv4Loose(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, part := range parts {
		n, ok := parseIPv4Part(part)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Part parses one part of a loose IPv4 address. Values are capped
// well above 2^32 so that overflow cannot wrap a huge number into range.
func parseIPv4Part(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if !isIPv4Digits(s, base) {
		return 0, false
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return 0, true
	}
	if len(s) > 12 {
		return 1 << 40, true // far out of range; rejected by the caller
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// isASCIIHost reports whether s needs no IDNA conversion.
func isASCIIHost(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isIPv4Digits reports whether s is non-empty and all digits of the base.
func isIPv4Digits(s string, base int) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d int
		switch {
		case '0' <= c && c <= '9':
			d = int(c - '0')
		case 'a' <= c && c <= 'f':
			d = int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int(c-'A') + 10
		default:
			return false
		}
		if d >= base {
			return false
		}
	}
	return true
}
