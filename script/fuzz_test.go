package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/onionkit/onion"
)

const fuzzScript = `
def shape(name, count=1, ratio=0.5, flag=False, items=[], extra={}):
    """Echoes its arguments back, after a request whose answer it reads.

    name: any text
    """
    answer = request("GET", "/echo", query={"name": name})
    body = answer.json() if answer.status == 200 else None
    return {"name": name, "count": count, "ratio": ratio, "flag": flag, "items": items, "extra": extra, "body": body}
`

// FuzzCall sends arbitrary arguments from the model, and arbitrary bodies
// from the application, through a script tool: every call ends with a
// result or an error, never a panic.
func FuzzCall(f *testing.F) {
	f.Add(`{"name":"a"}`, `{"ok":true}`)
	f.Add(`{"name":"a","count":3,"ratio":1e308,"flag":true,"items":[1,"x",null],"extra":{"k":[{}]}}`, `[1,2`)
	f.Add(`{"name":"\u0000","count":1.5}`, "\xff\xfe")
	f.Add(`[]`, ``)
	f.Add(`{"name":"a","extra":{"a":{"b":{"c":{"d":[[[[]]]]}}}}}`, `{"a":1e999}`)
	f.Add(`{"name":"a"}`, "{\x00\"\x00k\x00\"\x00:\x001\x00}\x00")
	f.Add(`{"name":"a"}`, `{"k": "\\u0041\\u0042<![CDATA[x]]>"}`)
	f.Fuzz(func(t *testing.T, args, body string) {
		app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}))
		defer app.Close()
		tools, err := Parse("fuzz.star", fuzzScript, BaseURL(app.URL))
		if err != nil {
			t.Fatal(err)
		}
		out, err := tools[0].Call(context.Background(), args)
		var pe *onion.PanicError
		if errors.As(err, &pe) {
			t.Fatalf("panic on args %q body %q: %v", args, body, pe.Value)
		}
		_ = fmt.Sprint(out)
	})
}

const markupScript = `
def scrape(selector, pattern):
    """Parses the application's answer as HTML and as XML and searches it.

    selector: a CSS selector
    pattern: a regular expression
    """
    body = request("GET", "/page").text
    out = []
    for parse in [html.parse, xml.parse]:
        doc = attempt(parse, body)
        if doc.ok:
            found = attempt(doc.value.select, selector)
            if found.ok:
                out.append([[n.tag, n.text, n.attrs] for n in found.value[:5]])
    out.append(attempt(re.findall, pattern, body).ok)
    out.append(text.truncate(text.squash(body), 20))
    return out
`

// FuzzMarkup parses arbitrary answers from the application with the html,
// xml, re and text modules, with arbitrary selectors and patterns from the
// model: every call ends with a result or an error, never a panic.
func FuzzMarkup(f *testing.F) {
	f.Add(`<ul><li class="a">x</li></ul>`, "li.a", "[a-z]+")
	f.Add(`<?xml version="1.0" encoding="ISO-8859-1"?><rss><item><title>t</title></item></rss>`, "item > title", "(t)")
	f.Add(`<a><b><c></a>`, ":has(b)", "(")
	f.Add("<div>"+string(make([]byte, 600))+"</div>", "div div", `\pL+`)
	f.Add(`<!DOCTYPE x [<!ENTITY e "&e;&e;">]><x>&e;</x>`, "*", "a{1000}")
	// Echoes of the credential that only parsing makes whole (redacted at
	// the crossing back into the script).
	f.Add(`<p title="Zq8vT3mK9pL2xR7wN4bY">Zq8v<b>T3mK</b>9pL2<!-- -->xR7wN4bY</p>`, "p", "[A-Z].+")
	f.Add(`<r a="Zq8v&#84;3mK9pL2xR7wN4bY"><![CDATA[Zq8vT3]]><![CDATA[mK9pL2]]>xR7wN4bY</r>`, "r", `(?s).+`)
	f.Add("<?xml version=\"1.0\" encoding=\"utf-16le\"?>"+"<\x00r\x00>\x00Z\x00q\x008\x00v\x00T\x003\x00m\x00K\x009\x00p\x00L\x002\x00x\x00R\x00<\x00/\x00r\x00>\x00", "r", ".")
	f.Add(`{"html": "Zq8vT3\u003cb\u003emK9pL2xR7wN4bY"}`, "*", `\\u003c`)
	f.Fuzz(func(t *testing.T, body, selector, pattern string) {
		app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, body)
		}))
		defer app.Close()
		tools, err := Parse("markup.star", markupScript, BaseURL(app.URL), MaxSteps(200_000), Header("X-Api-Key", "Zq8vT3mK9pL2xR7wN4bY"))
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"selector": selector, "pattern": pattern})
		_, err = tools[0].Call(context.Background(), string(args))
		var pe *onion.PanicError
		if errors.As(err, &pe) || err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("panic on body %q selector %q pattern %q: %v", body, selector, pattern, err)
		}
	})
}

// FuzzScript runs arbitrary code as the body of a tool, with small limits:
// every call ends with a result or an error, never a panic, and never the
// process running out of memory. The seeds are the memory bombs.
func FuzzScript(f *testing.F) {
	f.Add(`return 1 + 1`)
	for _, expr := range []string{
		`[0] * (1 << 28)`, `"x" * (1 << 32)`, `",".join(["x" * (1 << 20)] * 4096)`,
		`[i for i in range(1 << 30)]`, `[[j for j in range(1000)] for i in range(1 << 20)]`,
		`("x" * 65536).replace("x", "x" * 65536)`, `list(range(1 << 28))`, `json.decode("[" + "0," * 100000 + "0]")`,
	} {
		f.Add("return " + expr)
	}
	f.Add("s = \"x\"\n    for _ in range(40):\n        s = s + s\n    return s")
	f.Add("x = [1]\n    for _ in range(40):\n        x = [x, x]\n    return json.encode(x)")
	f.Add("l = [0]\n    for _ in range(40):\n        l += l\n    return len(l)")
	f.Add("d = {}\n    for i in range(1 << 30):\n        d[i] = i\n    return d")
	f.Add("x = [1]\n    for _ in range(40):\n        x = [x, x]\n    return x")
	f.Fuzz(func(t *testing.T, body string) {
		src := "def f():\n    \"\"\"Runs the fuzzed body.\"\"\"\n    " + body + "\n"
		tools, err := Parse("fuzz.star", src, MaxMemory(1<<20), MaxSteps(100_000))
		if err != nil {
			return // not a valid script
		}
		_, err = tools[0].Call(context.Background(), `{}`)
		var pe *onion.PanicError
		if errors.As(err, &pe) || err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("panic on body %q: %v", body, err)
		}
	})
}
