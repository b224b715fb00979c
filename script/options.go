package script

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The defaults of the per-call limits.
const (
	DefaultMaxRequests      = 10               // DefaultMaxRequests is the default of MaxRequests.
	DefaultTimeout          = 20 * time.Second // DefaultTimeout is the default of Timeout.
	DefaultMaxSteps         = 1_000_000        // DefaultMaxSteps is the default of MaxSteps.
	DefaultMaxResponseBytes = 1 << 20          // DefaultMaxResponseBytes is the default of MaxResponseBytes.
	DefaultMaxMemory        = 256 << 20        // DefaultMaxMemory is the default of MaxMemory.
)

// An Option configures the tools made by Load and Parse.
type Option func(*config)

// config is what the options set; it is fixed once the tools are made.
type config struct {
	baseURL     string
	headers     []header
	query       []header // parameters added to every request, like headers
	maxRequests int
	timeout     time.Duration
	maxSteps    int
	maxResponse int
	maxMemory   int64
	client      *http.Client
	base        *url.URL  // parsed baseURL, nil when none was given
	redactor    *redactor // finds the header values in responses
}

type header struct{ name, value string }

// BaseURL sets the application every request goes to, such as
// "https://tickets.example.com" or "http://localhost:8080/api" (a path is a
// prefix of every request path). Without it, request fails.
func BaseURL(u string) Option { return func(c *config) { c.baseURL = u } }

// Header adds a header, such as the credentials, to every request. It is set
// by Go: scripts can neither read it nor set a header of the same name.
func Header(name, value string) Option {
	return func(c *config) { c.headers = append(c.headers, header{name, value}) }
}

// Query adds a query parameter, such as an API key, to every request. Like
// a Header, it is set by Go: scripts can neither read it nor set a
// parameter of the same name (in any case), and wherever the application
// echoes it the script reads "[redacted]".
func Query(name, value string) Option {
	return func(c *config) { c.query = append(c.query, header{name, value}) }
}

// MaxRequests caps the requests one call may make (default 10).
func MaxRequests(n int) Option { return func(c *config) { c.maxRequests = n } }

// Timeout bounds one call, requests in flight included (default 20s).
func Timeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// MaxSteps caps the Starlark execution steps of one call, and of running the
// file's top level at load (default 1,000,000: an endless loop ends within
// a fraction of a second, a loop over a few thousand items does not).
func MaxSteps(n int) Option { return func(c *config) { c.maxSteps = n } }

// MaxResponseBytes caps the bytes of one response body a script gets
// (default 1 MiB). A longer body is cut there: the response's truncated
// attribute is True and a marker ends its body.
func MaxResponseBytes(n int) Option { return func(c *config) { c.maxResponse = n } }

// MaxMemory caps the bytes one call may allocate, and running the file's
// top level at load (default 256 MiB). What a script builds is counted
// before it is built (a list repeated, strings joined or concatenated, a
// value written as text or JSON, a response decoded), whether it is kept or
// not, and the call ends with an error instead of the process running out
// of memory.
func MaxMemory(n int) Option { return func(c *config) { c.maxMemory = int64(n) } }

// HTTPClient sets the client requests are sent with (default
// http.DefaultClient's settings). Its CheckRedirect is replaced, since
// redirects are never followed, and its Jar is not used.
func HTTPClient(hc *http.Client) Option { return func(c *config) { c.client = hc } }

func newConfig(opts []Option) (*config, error) {
	c := &config{
		maxRequests: DefaultMaxRequests,
		timeout:     DefaultTimeout,
		maxSteps:    DefaultMaxSteps,
		maxResponse: DefaultMaxResponseBytes,
		maxMemory:   DefaultMaxMemory,
	}
	for _, o := range opts {
		o(c)
	}
	switch {
	case c.maxRequests < 0:
		return nil, fmt.Errorf("script.MaxRequests(%d): must not be negative", c.maxRequests)
	case c.timeout <= 0:
		return nil, fmt.Errorf("script.Timeout(%v): must be positive", c.timeout)
	case c.maxSteps <= 0:
		return nil, fmt.Errorf("script.MaxSteps(%d): must be positive", c.maxSteps)
	case c.maxResponse <= 0:
		return nil, fmt.Errorf("script.MaxResponseBytes(%d): must be positive", c.maxResponse)
	case c.maxMemory <= 0:
		return nil, fmt.Errorf("script.MaxMemory(%d): must be positive", c.maxMemory)
	}
	if c.baseURL != "" {
		u, err := url.Parse(c.baseURL)
		if err != nil {
			return nil, fmt.Errorf("script.BaseURL: %w", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("script.BaseURL(%q): want an http or https URL with a host", c.baseURL)
		}
		if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("script.BaseURL(%q): must not have a query, fragment or user info; use script.Header for credentials", c.baseURL)
		}
		c.base = u
	}
	var values, plain []string
	for _, h := range c.headers {
		if !validHeaderName(h.name) {
			return nil, fmt.Errorf("script.Header(%q): not a valid header name", h.name)
		}
		if strings.ContainsAny(h.value, "\r\n\x00") {
			return nil, fmt.Errorf("script.Header(%q): the value must not contain CR, LF or NUL", h.name)
		}
		if describing[headerKey(h.name)] {
			plain = append(plain, h.value)
			continue
		}
		values = append(values, h.value)
	}
	for _, p := range c.query {
		if p.name == "" {
			return nil, fmt.Errorf("script.Query(%q): the name must not be empty", p.name)
		}
		values = append(values, p.value)
	}
	c.redactor = newRedactor(values, plain...)
	hc := http.Client{}
	if c.client != nil {
		hc = *c.client
	}
	hc.Jar = nil // a cookie jar would carry state between calls and tools
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.client = &hc
	return c, nil
}

// describing are the request headers that describe what is asked for
// rather than who asks (normalised names): their values are redacted only
// whole, not by runs as a credential's are, since parts of them
// ("application/", "Mozilla/5.0 ") are ordinary text.
var describing = map[string]bool{
	"accept": true, "acceptcharset": true, "acceptlanguage": true, "useragent": true,
	"contenttype": true, "contentlanguage": true, "cachecontrol": true, "pragma": true,
	"prefer": true, "xrequestedwith": true, "ifmatch": true, "ifnonematch": true,
	"ifmodifiedsince": true, "ifunmodifiedsince": true,
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 127 || !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}
