package webfetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/internal/htmltext"
	"github.com/onionkit/onion/builtin/internal/netpolicy"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// Defaults of NewWebFetch.
const (
	defaultMaxBodyBytes   = 2 << 20 // 2 MiB
	defaultFetchTimeout   = 20 * time.Second
	defaultFetchUserAgent = "Mozilla/5.0 (compatible; onion-web-fetch/1.0; +https://github.com/onionkit/onion)"
	maxFetchRedirects     = 5
)

// WebFetchOption configures the tool made by NewWebFetch.
type WebFetchOption func(*webFetcher)

// AllowAddresses admits the given private address ranges, which web_fetch
// otherwise refuses: for example netip.MustParsePrefix("127.0.0.0/8") to
// fetch from a server on this machine, as tests do with httptest. It is the
// only way to open them; no environment variable does. Invalid prefixes
// are ignored.
func AllowAddresses(prefixes ...netip.Prefix) WebFetchOption {
	return func(f *webFetcher) {
		for _, p := range prefixes {
			if p.IsValid() {
				f.policy.Allow = append(f.policy.Allow, p.Masked())
			}
		}
	}
}

// MaxBodyBytes caps how much of a response body web_fetch reads (after
// decompression); the content is cut there with a visible marker. The
// default is 2 MiB; n <= 0 keeps it.
func MaxBodyBytes(n int64) WebFetchOption {
	return func(f *webFetcher) {
		if n > 0 {
			f.maxBody = n
		}
	}
}

// FetchTimeout caps the time one fetch may take, redirects and reading the
// body included. The default is 20 seconds; d <= 0 keeps it.
func FetchTimeout(d time.Duration) WebFetchOption {
	return func(f *webFetcher) {
		if d > 0 {
			f.timeout = d
		}
	}
}

// UserAgent sets the User-Agent header web_fetch sends; an empty ua keeps
// the default, which names onion.
func UserAgent(ua string) WebFetchOption {
	return func(f *webFetcher) {
		if ua != "" {
			f.userAgent = ua
		}
	}
}

// webFetchDescription is what the model reads about web_fetch.
const webFetchDescription = `Fetch one public web page (http or https) and return its readable content. ` +
	`The answer starts with "Title:", "URL:" (the final URL after redirects) and "Content-Type:" lines, ` +
	`then a blank line and the content: HTML pages reduced to their main text as Markdown (tables kept), ` +
	`plain text, JSON and XML as they are. Only HTML, text, JSON and XML are read; other content types are refused. ` +
	`Private, loopback and link-local addresses are refused. Long pages are cut, with a marker saying so.`

// NewWebFetch returns the web_fetch tool (intent read): it fetches one
// public http(s) URL and returns its title, final URL and readable content
// as text:
//
//	Title: <page title>
//	URL: <final URL>
//	Content-Type: <media type>
//
//	<content>
//
// HTML is reduced to its main content (go-readability) and converted to
// Markdown with tables; text, JSON and XML come as they are.
//
// Safety is the point of the tool. Only http and https are fetched, and
// only public addresses: loopback, private, link-local (including the cloud
// metadata address 169.254.169.254), carrier-grade NAT, multicast and
// unspecified addresses, IPv4 and IPv6 alike, are refused. The check is
// made on the resolved IP when connecting, so DNS rebinding cannot get
// round it, and again on every redirect (at most 5). Proxies from the
// environment are not used, since a proxy would connect on the tool's
// behalf. Bodies are cut at MaxBodyBytes (2 MiB), whole fetches at
// FetchTimeout (20 s). Refusals are errors that name the address or URL
// and why.
func NewWebFetch(opts ...WebFetchOption) *onion.Tool {
	f := newWebFetcher(opts...)
	t, err := onion.NewTool(f.webFetch,
		onion.Name("web_fetch"),
		onion.Description(webFetchDescription),
		onion.Read,
	)
	if err != nil {
		panic("webfetch: " + err.Error()) // the signature is ours: a bug
	}
	return t
}

// webFetcher holds one web_fetch tool's settings; it is not changed after
// newWebFetcher returns, so calls may run concurrently.
type webFetcher struct {
	policy    netpolicy.Policy
	maxBody   int64
	timeout   time.Duration
	userAgent string
	client    *http.Client
}

func newWebFetcher(opts ...WebFetchOption) *webFetcher {
	f := &webFetcher{
		maxBody:   defaultMaxBodyBytes,
		timeout:   defaultFetchTimeout,
		userAgent: defaultFetchUserAgent,
	}
	for _, o := range opts {
		o(f)
	}
	f.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would connect for us, past the address check
			DialContext:           f.policy.DialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
			// One connection per fetch: nothing idles between calls, so
			// no goroutine outlives a fetch.
			DisableKeepAlives: true,
		},
		CheckRedirect: f.checkRedirect,
	}
	return f
}

// webFetchArgs are web_fetch's parameters.
type webFetchArgs struct {
	URL string `json:"url" doc:"The absolute http:// or https:// URL of the page to fetch."`
}

// webFetch is the tool's function.
func (f *webFetcher) webFetch(ctx context.Context, args webFetchArgs) (string, error) {
	p, err := f.fetch(ctx, args.URL)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// fetchedPage is the result of one fetch.
type fetchedPage struct {
	URL         string // final URL, after redirects
	Title       string
	ContentType string // media type, without parameters
	Content     string // Markdown for HTML; otherwise the body as it came
}

// String formats the page as web_fetch returns it to the model.
func (p *fetchedPage) String() string {
	var b strings.Builder
	b.Grow(len(p.Content) + len(p.URL) + len(p.Title) + 64)
	if p.Title != "" {
		b.WriteString("Title: ")
		b.WriteString(p.Title)
		b.WriteByte('\n')
	}
	b.WriteString("URL: ")
	b.WriteString(p.URL)
	b.WriteString("\nContent-Type: ")
	b.WriteString(p.ContentType)
	b.WriteString("\n\n")
	b.WriteString(p.Content)
	return b.String()
}

// checkRedirect vets every redirect hop like the first URL.
func (f *webFetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxFetchRedirects {
		return fmt.Errorf("stopped after %d redirects", maxFetchRedirects)
	}
	u, err := f.policy.CheckURL(req.URL.String())
	if err != nil {
		return fmt.Errorf("redirect refused: %w", err)
	}
	req.URL = u
	req.Host = ""
	return nil
}

// fetchKind is how web_fetch treats a media type.
type fetchKind int

const (
	fetchRefused fetchKind = iota
	fetchHTML
	fetchText // text, JSON and XML: passed through
)

func classifyFetch(mediaType string) fetchKind {
	switch {
	case mediaType == "text/html", mediaType == "application/xhtml+xml":
		return fetchHTML
	case strings.HasPrefix(mediaType, "text/"),
		mediaType == "application/json", strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", strings.HasSuffix(mediaType, "+xml"):
		return fetchText
	}
	return fetchRefused
}

// fetch fetches raw and makes it readable.
func (f *webFetcher) fetch(ctx context.Context, raw string) (*fetchedPage, error) {
	u, err := f.policy.CheckURL(strings.TrimSpace(raw))
	if err != nil {
		return nil, err
	}
	shown := u.Redacted()
	tctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()

	// timedOut turns an error caused by our own deadline into one that says so.
	timedOut := func() error {
		if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("fetch %s: no complete answer within %s: %w", shown, f.timeout, context.DeadlineExceeded)
		}
		return nil
	}

	req, err := http.NewRequestWithContext(tctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", shown, err)
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,application/xml;q=0.8,text/*;q=0.7")
	resp, err := f.client.Do(req)
	if err != nil {
		if te := timedOut(); te != nil {
			return nil, te
		}
		return nil, fetchError(shown, err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL.Redacted()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("fetch %s: the server answered %s", final, resp.Status)
	}

	body := bufio.NewReaderSize(io.LimitReader(resp.Body, f.maxBody+1), 4096)
	ctype := resp.Header.Get("Content-Type")
	if ctype == "" {
		head, _ := body.Peek(512)
		ctype = http.DetectContentType(head)
	}
	mediaType, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: unreadable content type %q: %w", final, ctype, err)
	}
	kind := classifyFetch(mediaType)
	if kind == fetchRefused {
		return nil, fmt.Errorf("fetch %s: content type %q is not supported; web_fetch reads only HTML, text, JSON and XML", final, mediaType)
	}

	data, err := io.ReadAll(body)
	if err != nil {
		if te := timedOut(); te != nil {
			return nil, te
		}
		return nil, fmt.Errorf("fetch %s: reading the body: %w", final, err)
	}
	truncated := int64(len(data)) > f.maxBody
	if truncated {
		data = data[:f.maxBody]
	}
	data = bodyToUTF8(data, ctype)

	page := &fetchedPage{URL: final, ContentType: mediaType}
	if kind == fetchHTML {
		page.Title, page.Content, err = readableMarkdown(tctx, data, resp.Request.URL)
		if err != nil {
			if te := timedOut(); te != nil {
				return nil, te
			}
			return nil, fmt.Errorf("fetch %s: converting html: %w", final, err)
		}
	} else {
		page.Content = string(data)
	}
	if truncated {
		page.Content += fmt.Sprintf("\n\n[web_fetch: content cut here: the response is larger than %s and the rest was not read]", webByteSize(f.maxBody))
	}
	return page, nil
}

// fetchError makes an error from http.Client.Do clear: a refused address
// or redirect is said as such, naming the hop where it happened.
func fetchError(shown string, err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return fmt.Errorf("fetch %s: %w", shown, err)
	}
	at := ""
	if hop, perr := url.Parse(ue.URL); perr == nil && hop.Redacted() != shown {
		at = " (redirected to " + hop.Redacted() + ")"
	}
	// A refused dial is reported as the refusal alone; the dialler's
	// wording around it adds nothing.
	var oe *net.OpError
	var ae *netpolicy.AddressError
	if errors.As(ue.Err, &oe) && errors.As(oe.Err, &ae) {
		return fmt.Errorf("fetch %s%s: %w", shown, at, ae)
	}
	return fmt.Errorf("fetch %s%s: %w", shown, at, ue.Err)
}

// bodyToUTF8 converts HTML and text bodies in another declared or sniffed
// charset to UTF-8 and drops a rune cut in half at the end. JSON is UTF-8
// by definition.
func bodyToUTF8(data []byte, ctype string) []byte {
	if utf8.Valid(data) {
		return data
	}
	if !strings.Contains(ctype, "json") {
		if enc, name, _ := charset.DetermineEncoding(data, ctype); name != "utf-8" {
			if out, err := enc.NewDecoder().Bytes(data); err == nil {
				return out
			}
		}
	}
	// UTF-8 with a rune cut at the end (or invalid bytes): trim the tail,
	// replace the rest.
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				data = data[:i]
			}
			break
		}
	}
	return bytes.ToValidUTF8(data, []byte("\uFFFD"))
}

// readableMarkdown extracts an HTML page's main content as Markdown. When
// go-readability finds no article, the whole body is converted.
func readableMarkdown(ctx context.Context, page []byte, pageURL *url.URL) (title, markdown string, err error) {
	var node *html.Node
	if art, err := readability.FromReader(bytes.NewReader(page), pageURL); err == nil && art.Node != nil {
		node, title = art.Node, art.Title()
	}
	if node == nil {
		doc, err := html.Parse(bytes.NewReader(page))
		if err != nil {
			return "", "", err
		}
		node, title = webHTMLFind(doc, atom.Body), htmltext.Text(webHTMLFind(doc, atom.Title))
		if node == nil {
			node = doc
		}
	}
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
	md, err := conv.ConvertNode(node, converter.WithContext(ctx), converter.WithDomain(pageURL.String()))
	if err != nil {
		return "", "", err
	}
	markdown = strings.TrimSpace(string(md))
	if markdown == "" {
		markdown = "(the page has no readable text)"
	}
	return strings.TrimSpace(title), markdown, nil
}

func webHTMLFind(n *html.Node, a atom.Atom) *html.Node {
	if n == nil {
		return nil
	}
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if found := webHTMLFind(c, a); found != nil {
			return found
		}
	}
	return nil
}

// webByteSize formats n for people: "2 MiB", "512 KiB", "100 bytes".
func webByteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
