package netpolicy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

var webLoopback4 = netip.MustParsePrefix("127.0.0.0/8")

func TestPolicyCheckAddress(t *testing.T) {
	tests := []struct {
		addr   string
		reason string // "" means allowed
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "IPv4-mapped 127.0.0.1 is loopback"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.0.1", "private"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.127.255.255", "carrier-grade NAT"},
		{"169.254.169.254", "cloud metadata"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"192.0.2.1", "documentation"},
		{"2001:db8::1", "documentation"},
		{"fd00::1", "unique-local"},
		{"fc00::1", "unique-local"},
		{"fec0::1", "site-local"},
		{"64:ff9b::7f00:1", "NAT64"},
		{"2002:7f00:1::1", "6to4"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
		{"::7f00:1", "IPv4-compatible"},
		{"100::1", "discard"},
		{"4000::1", "global unicast"},
		{"8.8.8.8", ""},
		{"93.184.216.34", ""},
		{"100.63.255.255", ""},
		{"172.32.0.1", ""},
		{"::ffff:8.8.8.8", ""},
		{"2606:4700:4700::1111", ""},
		{"2a00:1450:4001:80b::200e", ""},
	}
	var p Policy
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			err := p.Check(netip.MustParseAddr(tt.addr))
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("check(%s) = %v, want allowed", tt.addr, err)
				}
				return
			}
			var ae *AddressError
			if !errors.As(err, &ae) {
				t.Fatalf("check(%s) = %v, want *AddressError", tt.addr, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.reason) || !strings.Contains(msg, strings.Split(tt.addr, "%")[0]) {
				t.Errorf("check(%s) = %q, want it to name the address and %q", tt.addr, msg, tt.reason)
			}
		})
	}
	if err := (Policy{}).Check(netip.Addr{}); err == nil {
		t.Error("check(zero Addr) = nil, want refusal")
	}
}

func TestPolicyAllowList(t *testing.T) {
	p := Policy{Allow: []netip.Prefix{webLoopback4}}
	for _, a := range []string{"127.0.0.1", "127.9.9.9", "::ffff:127.0.0.1", "8.8.8.8"} {
		if err := p.Check(netip.MustParseAddr(a)); err != nil {
			t.Errorf("check(%s) with 127.0.0.0/8 allowed = %v, want nil", a, err)
		}
	}
	for _, a := range []string{"::1", "10.0.0.1", "169.254.169.254", "0.0.0.0"} {
		if err := p.Check(netip.MustParseAddr(a)); err == nil {
			t.Errorf("check(%s) with only 127.0.0.0/8 allowed = nil, want refusal", a)
		}
	}
}

func TestPolicyCheckURL(t *testing.T) {
	tests := []struct {
		raw     string
		allow   bool   // allow 127.0.0.0/8
		want    string // the accepted URL, or "" if refused
		errPart string // a piece of the refusal message
	}{
		// Odd spellings of 127.0.0.1.
		{raw: "http://127.0.0.1/", errPart: "127.0.0.1 refused: loopback"},
		{raw: "http://2130706433/", errPart: "127.0.0.1 refused"},
		{raw: "http://0x7f.1/", errPart: "127.0.0.1 refused"},
		{raw: "http://0x7f000001/", errPart: "127.0.0.1 refused"},
		{raw: "http://0X7F.0.0.1/", errPart: "127.0.0.1 refused"},
		{raw: "http://0177.0.0.1/", errPart: "127.0.0.1 refused"},
		{raw: "http://017700000001/", errPart: "127.0.0.1 refused"},
		{raw: "http://127.1/", errPart: "127.0.0.1 refused"},
		{raw: "http://127.0.1/", errPart: "127.0.0.1 refused"},
		{raw: "http://127.0.0.1./", errPart: "127.0.0.1 refused"},
		{raw: "http://127.0.0.1:8080/x", errPart: "127.0.0.1 refused"},
		{raw: "http://１２７.０.０.１/", errPart: "127.0.0.1 refused"},
		{raw: "http://[::ffff:127.0.0.1]/", errPart: "IPv4-mapped 127.0.0.1 is loopback"},
		{raw: "http://[::ffff:7f00:1]/", errPart: "IPv4-mapped 127.0.0.1 is loopback"},
		{raw: "http://[0:0:0:0:0:ffff:127.0.0.1]:80/", errPart: "loopback"},
		{raw: "http://[::1]/", errPart: "::1 refused: loopback"},
		{raw: "http://[::]/", errPart: "unspecified"},
		{raw: "http://0.0.0.0/", errPart: "0.0.0.0 refused: unspecified"},
		{raw: "http://0/", errPart: "0.0.0.0 refused"},
		// Other refused ranges.
		{raw: "http://169.254.169.254/latest/meta-data/", errPart: "cloud metadata"},
		{raw: "http://[::ffff:169.254.169.254]/", errPart: "cloud metadata"},
		{raw: "http://0xa9fea9fe/", errPart: "169.254.169.254 refused"},
		{raw: "http://10.0.0.1/", errPart: "private"},
		{raw: "http://192.168.1.1/", errPart: "private"},
		{raw: "http://172.16.5.4/", errPart: "private"},
		{raw: "http://100.64.0.1/", errPart: "carrier-grade NAT"},
		{raw: "http://224.0.0.1/", errPart: "multicast"},
		{raw: "http://[ff02::1]/", errPart: "multicast"},
		{raw: "http://[fe80::1]/", errPart: "link-local"},
		{raw: "http://[fe80::1%25eth0]/", errPart: "zone"},
		{raw: "http://[fd00::1]/", errPart: "unique-local"},
		{raw: "http://[64:ff9b::7f00:1]/", errPart: "NAT64"},
		{raw: "http://[2002:7f00:1::]/", errPart: "6to4"},
		{raw: "http://255.255.255.255/", errPart: "broadcast"},
		// Numeric-looking hosts that are not valid addresses.
		{raw: "http://1.2.3.4.5/", errPart: "not a valid one"},
		{raw: "http://256.0.0.1/", errPart: "not a valid one"},
		{raw: "http://0x100000000/", errPart: "not a valid one"},
		{raw: "http://4294967296/", errPart: "not a valid one"},
		{raw: "http://08.0.0.1/", errPart: "not a valid one"},
		{raw: "http://example.0x/", errPart: "not a valid one"}, // "0x" alone is 0: ends in a number
		// Schemes, user info, shape.
		{raw: "ftp://example.com/", errPart: `scheme "ftp" is not allowed`},
		{raw: "file:///etc/passwd", errPart: `scheme "file" is not allowed`},
		{raw: "javascript:alert(1)", errPart: "not allowed"},
		{raw: "gopher://example.com/", errPart: "not allowed"},
		{raw: "example.com/page", errPart: "no scheme"},
		{raw: "http://user:secret@example.com/", errPart: "user info"},
		{raw: "http://example.com@127.0.0.1/", errPart: "user info"},
		{raw: "http:///path", errPart: "no host"},
		{raw: `http:\\127.0.0.1/`, errPart: "not a hierarchical url"},
		{raw: "http://example.com:99999/", errPart: "invalid port"},
		{raw: "http://%31%32%37.0.0.1/", errPart: "invalid url"},
		// Allowed.
		{raw: "https://example.com/a?b=c#d", want: "https://example.com/a?b=c#d"},
		{raw: "HTTP://Example.COM/", want: "http://example.com/"},
		{raw: "http://93.184.216.34/", want: "http://93.184.216.34/"},
		{raw: "http://0x5db8d822/", want: "http://93.184.216.34/"},
		{raw: "http://1572395042:8080/x", want: "http://93.184.216.34:8080/x"},
		{raw: "http://93.184.216.34./", want: "http://93.184.216.34/"},
		{raw: "http://[2606:4700:4700::1111]/", want: "http://[2606:4700:4700::1111]/"},
		{raw: "http://münchen.de/", want: "http://xn--mnchen-3ya.de/"},
		{raw: "http://localhost/", want: "http://localhost/"}, // a name: checked when dialled
		// Allowed by the allow list.
		{raw: "http://127.0.0.1:8080/", allow: true, want: "http://127.0.0.1:8080/"},
		{raw: "http://0x7f.1/", allow: true, want: "http://127.0.0.1/"},
		{raw: "http://[::ffff:127.0.0.1]/", allow: true, want: "http://[::ffff:127.0.0.1]/"},
		{raw: "http://[::1]/", allow: true, errPart: "::1 refused"},
		{raw: "http://169.254.169.254/", allow: true, errPart: "cloud metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			var p Policy
			if tt.allow {
				p.Allow = []netip.Prefix{webLoopback4}
			}
			u, err := p.CheckURL(tt.raw)
			if tt.want != "" {
				if err != nil {
					t.Fatalf("checkURL(%q) = %v, want %s", tt.raw, err, tt.want)
				}
				if got := u.String(); got != tt.want {
					t.Errorf("checkURL(%q) = %s, want %s", tt.raw, got, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("checkURL(%q) = %s, want refusal", tt.raw, u)
			}
			if !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("checkURL(%q) = %q, want it to contain %q", tt.raw, err, tt.errPart)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("checkURL(%q) error shows the password: %q", tt.raw, err)
			}
		})
	}
}

// TestPolicyDialChecksResolvedAddress proves the check happens on the
// address the dialer connects to, after name resolution: "localhost" passes
// checkURL as a name but cannot be dialled.
func TestPolicyDialChecksResolvedAddress(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	defer func() { ln.Close(); <-accepted }()

	ctx := context.Background()
	var p Policy
	if _, err := p.CheckURL("http://localhost:" + strconv.Itoa(port) + "/"); err != nil {
		t.Fatalf("checkURL(localhost) = %v; a name is only checked when dialled", err)
	}
	for _, addr := range []string{"localhost:" + strconv.Itoa(port), "127.0.0.1:" + strconv.Itoa(port)} {
		c, err := p.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			t.Fatalf("dialContext(%s) connected, want refusal", addr)
		}
		var ae *AddressError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("dialContext(%s) = %v, want an *AddressError naming loopback", addr, err)
		}
	}
	if _, err := p.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("dialContext error %v does not name 127.0.0.1", err)
	}

	allowed := Policy{Allow: []netip.Prefix{webLoopback4}}
	c, err := allowed.DialContext(ctx, "tcp4", "localhost:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("dialContext(localhost) with 127.0.0.0/8 allowed = %v", err)
	}
	c.Close()

	if _, err := allowed.DialContext(ctx, "unix", "/tmp/x.sock"); err == nil {
		t.Error(`dialContext("unix") = nil error, want refusal`)
	}
}
