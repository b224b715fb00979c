package script

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
