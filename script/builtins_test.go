package script_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/script"
)

// eval runs body as the body of a tool of no parameters and returns what
// the model would read.
func eval(t *testing.T, body string, opts ...script.Option) (string, error) {
	t.Helper()
	src := "def f():\n    \"\"\"Evaluates.\"\"\"\n"
	for l := range strings.Lines(body) {
		src += "    " + l
	}
	tools, err := script.Parse("eval.star", src+"\n", opts...)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tools[0].Call(context.Background(), `{}`)
}

// evalCases checks each expression's JSON against its want.
func evalCases(t *testing.T, cases [][2]string) {
	t.Helper()
	for _, c := range cases {
		t.Run(c[0], func(t *testing.T) {
			got, err := eval(t, "return ["+c[0]+"]")
			if err != nil {
				got = "error: " + err.Error()
			} else {
				got = strings.TrimSuffix(strings.TrimPrefix(got, "["), "]")
			}
			if !strings.Contains(got, c[1]) || strings.HasPrefix(got, "error") != strings.HasPrefix(c[1], "error") {
				t.Errorf("%s = %s, want %s", c[0], got, c[1])
			}
		})
	}
}

func TestAttempt(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def _boom(x):
    fail("boom " + x)

def _twice(x, y=2):
    return x * y

def try_all():
    """Tries things.

    onion:intent read
    """
    bad = attempt(_boom, "now")
    good = attempt(_twice, 3, y=4)
    refused = attempt(request, "POST", "/echo")
    missing = attempt(ok, request("GET", "/api/tickets/7"))
    return [bad.ok, bad.value, bad.error, good.ok, good.value, good.error, refused.ok, refused.error, missing.ok, missing.error]

def spin():
    """Spins inside attempt.

    onion:intent read
    """
    def _loop():
        for i in range(100000000):
            pass
    r = attempt(_loop)
    return "went on after the step limit: " + str(r)

def many():
    """Requests too many times inside attempt.

    onion:intent read
    """
    for i in range(20):
        attempt(request, "GET", "/echo")
    return "went on after the request limit"
`)
	want := `[false,null,"boom now",true,12,null,false,"POST is not allowed for a read tool, which may only GET, HEAD; declare the intent that fits with an onion:intent line",false,"GET /api/tickets/7: status 404 Not Found: not found"]`
	if got := mustCall(t, tools, "try_all", `{}`); got != want {
		t.Errorf("= %s\nwant %s", got, want)
	}
	if _, err := call(t, tools, "spin", `{}`); err == nil || !strings.Contains(err.Error(), "step limit") {
		t.Errorf("attempt caught the step limit: err = %v", err)
	}
	if _, err := call(t, tools, "many", `{}`); err == nil || !strings.Contains(err.Error(), "script.MaxRequests") {
		t.Errorf("attempt caught the request limit: err = %v", err)
	}
	slow := a.parse(t, `
def slow():
    """Waits inside attempt.

    onion:intent read
    """
    r = attempt(request, "GET", "/slow")
    return "went on after the timeout: " + str(r)
`, script.Timeout(50*time.Millisecond))
	if _, err := call(t, slow, "slow", `{}`); err == nil || !strings.Contains(err.Error(), "(script.Timeout)") {
		t.Errorf("attempt caught the timeout: err = %v", err)
	}
}

func TestDig(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def read():
    """Digs.

    onion:intent read
    """
    answer = request("GET", "/api/tickets/42")
    data = {"a": {"b": [10, {"c": "deep"}]}}
    return [
        ok(answer),
        dig(data, "a", "b", 1, "c"),
        dig(data, "a", "b", -2),
        dig(data, "a", "x", "y"),
        dig(data, "a", "b", 5, default="none"),
        dig(data, "a", "b", "c"),
        dig(answer, "status"),
        dig(None, "a"),
    ]
`)
	want := `["The printer on floor 3 is on fire.","deep",10,null,"none",null,200,null]`
	if got := mustCall(t, tools, "read", `{}`); got != want {
		t.Errorf("= %s\nwant %s", got, want)
	}
}

func TestReModule(t *testing.T) {
	evalCases(t, [][2]string{
		{`re.match("[a-z]+", "abc123").group()`, `"abc"`},
		{`re.match("[0-9]+", "abc123")`, `null`},
		{`re.search("([0-9]+)-(?P<n>[a-z])", "ab 12-x").groups()`, `["12","x"]`},
		{`re.search("(?P<n>[0-9]+)", "ab 12").group("n")`, `"12"`},
		{`re.search("(?P<n>[0-9]+)", "ab 12").groupdict()`, `{"n":"12"}`},
		{`[re.search("[0-9]+", "ab 12").start(), re.search("[0-9]+", "ab 12").end()]`, `[3,5]`},
		{`re.findall("[0-9]+", "1 22 333")`, `["1","22","333"]`},
		{`re.findall("#([0-9]+)", "#1 #22")`, `["1","22"]`},
		{`re.findall("([a-z])=([0-9])", "a=1 b=2")`, `[["a","1"],["b","2"]]`},
		{`re.sub("([a-z]+)@", "${1} at ", "me@ you@")`, `"me at  you at "`},
		{`re.sub("[0-9]", "#", "a1b2c3", count=2)`, `"a#b#c3"`},
		{`re.sub("[0-9]+", lambda m: str(int(m.group()) * 2), "a1 b21")`, `"a2 b42"`},
		{`re.split(",\\s*", "a, b,c")`, `["a","b","c"]`},
		{`re.search("(a", "a")`, `error: `},
		{`re.search("a" * 5000, "a")`, `error: `},
	})
}

func TestReBoundsTime(t *testing.T) {
	// A big input costs steps: with a small budget the search is refused
	// before it runs, and the call ends like an endless loop would.
	_, err := eval(t, `return re.findall("(a|b)*c", "ab" * 100000)`, script.MaxSteps(10_000))
	if err == nil || !strings.Contains(err.Error(), "step limit of 10000 was reached (script.MaxSteps)") {
		t.Errorf("err = %v, want the step limit", err)
	}
	if _, err := eval(t, `return len(re.findall("(a|b)*c", "ab" * 100000))`); err != nil {
		t.Errorf("with the default budget: %v", err)
	}
}

func TestTextModule(t *testing.T) {
	evalCases(t, [][2]string{
		{`text.strip("  a b \n")`, `"a b"`},
		{`text.split(" a  b\tc ")`, `["a","b","c"]`},
		{`text.split("a, b,,c", ",")`, `["a","b","c"]`},
		{`text.split("a b c d", maxsplit=1)`, `["a","b c d"]`},
		{`text.split("a,b,c", ",", 1)`, `["a","b,c"]`},
		{`text.lines("one\n\n  two  \r\nthree")`, `["one","two","three"]`},
		{`text.words("a  b\nc")`, `["a","b","c"]`},
		{`text.squash("  a \n\n b  ")`, `"a b"`},
		{`text.truncate("short", 10)`, `"short"`},
		{`text.truncate("ééééééé", 3)`, `"ééé…"`},
		{`text.truncate("the printer is on fire", 16)`, `"the printer is…"`},
		{`text.truncate("abcdef", 3, marker=" [more]")`, `"abc [more]"`},
		{`[text.lower("AbC"), text.upper("aBc")]`, `["abc","ABC"]`},
	})
}

const page = `<!doctype html><html><head><title>Tickets</title><style>p{}</style></head>
<body><h1 id="top">Open tickets</h1>
<ul class="list"><li data-id="42"><a href="/t/42">Printer on fire</a></li>
<li data-id="43"><a href="/t/43">VPN drops</a></li></ul>
<script>var secret = 1;</script><p>Two <b>open</b>.</p></body></html>`

func TestHTMLModule(t *testing.T) {
	doc := fmt.Sprintf("html.parse(%q)", page)
	evalCases(t, [][2]string{
		{doc + `.select_one("title").text`, `"Tickets"`},
		{`[a.text for a in ` + doc + `.select("ul.list li a")]`, `["Printer on fire","VPN drops"]`},
		{`[li.attr("data-id") for li in ` + doc + `.select("li")]`, `["42","43"]`},
		{doc + `.select_one("a[href='/t/43']").attrs`, `{"href":"/t/43"}`},
		{doc + `.select_one("#top").tag`, `"h1"`},
		{doc + `.select_one("#nothing")`, `null`},
		{`len(` + doc + `.select_one("ul").children)`, `2`},
		{doc + `.select_one("body").text`, `"Open tickets\nPrinter on fire\nVPN drops\nTwo open."`},
		{doc + `.select("li:nth-child(2) a")[0].attr("href")`, `"/t/43"`},
		{doc + `.select("p[")`, `error: `},
	})
}

const feed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
<title>Status</title>
<item><title>Outage</title><pubDate>Mon, 30 Nov 2026</pubDate><dc:creator>ops</dc:creator><link href="/1" rel="self"/></item>
<item><title>Fixed</title><pubDate>Tue, 1 Dec 2026</pubDate><dc:creator>dev</dc:creator></item>
</channel></rss>`

func TestXMLModule(t *testing.T) {
	doc := fmt.Sprintf("xml.parse(%q)", feed)
	evalCases(t, [][2]string{
		{`[i.select_one("title").text for i in ` + doc + `.select("item")]`, `["Outage","Fixed"]`},
		{doc + `.select_one("item pubDate").tag`, `"pubDate"`},
		{doc + `.select_one("item > pubdate").text`, `"Mon, 30 Nov 2026"`},
		{`[c.text for c in ` + doc + `.select("creator")]`, `["ops","dev"]`},
		{doc + `.select_one("link[rel=self]").attrs`, `{"href":"/1","rel":"self"}`},
		{doc + `.select_one("rss").attr("version")`, `"2.0"`},
		{doc + `.select_one("channel > title").text`, `"Status"`},
		{`xml.parse("<a><b></a>")`, `error: `},
		{`xml.parse("")`, `error: `},
	})
}

func TestMarkupBounds(t *testing.T) {
	for _, mod := range []string{"html", "xml"} {
		t.Run(mod, func(t *testing.T) {
			_, err := eval(t, fmt.Sprintf(`return %s.parse("<div>" * 2000 + "x" + "</div>" * 2000).select_one("div").tag`, mod))
			if err == nil || !strings.Contains(err.Error(), "512") {
				t.Errorf("deep nesting: err = %v", err)
			}
			_, err = eval(t, fmt.Sprintf(`return %s.parse("<a>" + "<b>x</b>" * 100000 + "</a>").tag`, mod), script.MaxSteps(10_000))
			if err == nil || !strings.Contains(err.Error(), "(script.MaxSteps)") {
				t.Errorf("a big page over a small budget: err = %v", err)
			}
		})
	}
}

func TestStatusPage(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/status":
			io.WriteString(w, `<html><body><table class="incidents">
<tr><td class="title">  Login   fails for
  some users in the EU region since the last deploy</td><td>since 2026-11-30</td></tr>
<tr><td class="title">Slow search</td><td>ongoing</td></tr></table></body></html>`)
		case "/api/incidents/1":
			io.WriteString(w, `{"owner": {"name": "ops"}}`)
		case "/api/incidents/2":
			io.WriteString(w, `{"owner": null}`)
		default:
			http.Error(w, "no such incident", http.StatusNotFound)
		}
	}))
	defer app.Close()
	tools, err := script.Load("testdata/status.star", script.BaseURL(app.URL))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tool, args, want string }{
		{"incidents", `{}`, `[{"since":"2026-11-30","title":"Login fails for some users in the EU…"},{"since":null,"title":"Slow search"}]`},
		{"incidents", `{"limit":1}`, `[{"since":"2026-11-30","title":"Login fails for some users in the EU…"}]`},
		{"incident", `{"id":"1"}`, `{"owner":"ops"}`},
		{"incident", `{"id":"2"}`, `{"owner":"nobody"}`},
		{"incident", `{"id":"3"}`, `unknown: GET /api/incidents/3: status 404 Not Found: no such incident`},
	} {
		i := slices.IndexFunc(tools, func(tl *onion.Tool) bool { return tl.Name() == tc.tool })
		if got, err := tools[i].Call(context.Background(), tc.args); err != nil || got != tc.want {
			t.Errorf("%s(%s) = %s, %v\nwant %s", tc.tool, tc.args, got, err, tc.want)
		}
	}
}

// TestOkIsTheDecodedJSON holds ok to the seed's contract: ok(response) is
// the decoded JSON of a 2xx answer, so dig(ok(answer), "body") reads the
// JSON's body field (the reference example's line); an answer that is not
// JSON is its text, and the response keeps its own fields.
func TestOkIsTheDecodedJSON(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"body": "the printer is on fire", "id": 42}`)
		case "/problem":
			w.Header().Set("Content-Type", "application/problem+json")
			io.WriteString(w, `{"body": "problem"}`)
		case "/sniffed": // no Content-Type: Go sends text/plain
			io.WriteString(w, `  [1, 2]`)
		case "/number":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, `123`)
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<p>{"body": "no"}</p>`)
		case "/bad":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"body": `)
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer app.Close()
	tools, err := script.Parse("ok.star", `
def read(path):
    """Reads a path with ok.

    path: the path

    onion:intent read
    """
    answer = request("GET", path)
    got = ok(answer)
    return {"ok": got, "body": dig(got, "body"), "status": answer.status, "text": answer.text}
`, script.BaseURL(app.URL))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/json", `{"body":"the printer is on fire","ok":{"body":"the printer is on fire","id":42},"status":200,"text":"{\"body\": \"the printer is on fire\", \"id\": 42}"}`},
		{"/problem", `{"body":"problem","ok":{"body":"problem"},"status":200,"text":"{\"body\": \"problem\"}"}`},
		{"/sniffed", `{"body":null,"ok":[1,2],"status":200,"text":"  [1, 2]"}`},
		{"/number", `{"body":null,"ok":"123","status":200,"text":"123"}`},
		{"/html", `{"body":null,"ok":"<p>{\"body\": \"no\"}</p>","status":200,"text":"<p>{\"body\": \"no\"}</p>"}`},
		{"/empty", `{"body":null,"ok":null,"status":204,"text":""}`},
		{"/bad", `error: ok.star:10:13: the body of GET /bad (status 200): invalid JSON`},
	} {
		got, err := tools[0].Call(context.Background(), `{"path":"`+tc.path+`"}`)
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("ok(GET %s) = %s\nwant %s", tc.path, got, tc.want)
		}
	}
}
