package netpolicy

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckURL checks that checkURL never panics and that whatever it
// accepts is an http(s) URL without user info whose host is either a name
// (checked when dialled) or a literal address that is public, spelled in
// the canonical form that every later parser reads the same way.
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{
		"http://example.com/",
		"https://93.184.216.34:8443/path?q=1#frag",
		"http://2130706433/",
		"http://0x7f.1/",
		"http://0x7f000001/",
		"http://0177.0.0.1/",
		"http://017700000001/",
		"http://127.1/",
		"http://127.0.0.1./",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:7f00:1]/",
		"http://[::1]/",
		"http://[fe80::1%25eth0]/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/",
		"http://0xa9fea9fe/",
		"http://100.64.0.1/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://[2002:a9fe:a9fe::]/",
		"http://0/",
		"http://0x/",
		"http://1.2.3.4.5/",
		"http://4294967296/",
		"http://１２７.０.０.１/",
		"http://münchen.de/",
		"http://user:pass@example.com/",
		"http://example.com@127.0.0.1/",
		`http:\\127.0.0.1/`,
		"javascript:alert(1)",
		"file:///etc/passwd",
		"HTTP://EXAMPLE.COM:80/",
		"http://localhost:8080/",
		"http://0x5db8d822/",
		"http://example.0x7f/",
	} {
		f.Add(seed)
	}
	var p Policy
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := p.CheckURL(raw)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("checkURL(%q) accepted scheme %q", raw, u.Scheme)
		}
		if u.User != nil || u.Opaque != "" {
			t.Fatalf("checkURL(%q) accepted user info or an opaque url: %s", raw, u)
		}
		host := u.Hostname()
		if host == "" {
			t.Fatalf("checkURL(%q) accepted an empty host", raw)
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			if err := p.Check(ip); err != nil {
				t.Fatalf("checkURL(%q) accepted %s: %v", raw, u, err)
			}
		} else if endsInNumber(strings.ToLower(host)) {
			t.Fatalf("checkURL(%q) left a numeric host %q that is not canonical", raw, host)
		}
		// The accepted URL reads the same when parsed again, by net/url
		// (as net/http will) and by checkURL itself.
		again, err := url.Parse(u.String())
		if err != nil || again.Host != u.Host {
			t.Fatalf("checkURL(%q) = %s, which parses back as %v, %v", raw, u, again, err)
		}
		twice, err := p.CheckURL(u.String())
		if err != nil || twice.String() != u.String() {
			t.Fatalf("checkURL(%q) = %s, but checkURL of that = %v, %v", raw, u, twice, err)
		}
	})
}

// FuzzParseIPv4Loose checks the loose IPv4 parser against netip on the
// dotted-decimal form both accept.
func FuzzParseIPv4Loose(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "0x7f.1", "0177.0.0.1", "2130706433", "1.2.3.4.", "255.255.255.255", "256.1.1.1", "0x", "00", "1..2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ip, ok := parseIPv4Loose(s)
		if ok && !ip.Is4() {
			t.Fatalf("parseIPv4Loose(%q) = %v, not IPv4", s, ip)
		}
		if want, err := netip.ParseAddr(s); err == nil && want.Is4() && want.Zone() == "" {
			if !ok || ip != want {
				t.Fatalf("parseIPv4Loose(%q) = %v, %v; netip says %v", s, ip, ok, want)
			}
		}
	})
}
