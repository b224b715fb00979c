package script_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion/script"
)

// joinStar joins the pieces the application sends, each too short to be
// redacted on its own, and hands the joined secret to builtins in every
// kind of value; each reading is returned reversed, as the script saw it.
const joinStar = `
def _r(v):
    if type(v) == "string":
        return v[::-1]
    return str(v)[::-1]

def join():
    """Joins pieces of an echo, and sends them back.

    onion:intent write
    """
    joined = request("GET", "/").text.replace("|", "")
    d = {joined: joined}
    l = [joined, (joined, 1), d]
    l.append(l)
    dig(l)
    request("POST", "/" + joined, query={"q": joined}, body=joined, headers={"X-Note": joined})
    request("POST", "/", json={"note": [joined]})
    return {
        "held": _r(joined),
        "text": _r(text.strip(joined)),
        "re": _r(re.findall(".+", joined)),
        "error": _r(attempt(lambda: fail(joined)).error),
        "dict": _r(d),
        "list": _r(l[:3]),
        "out": joined,
    }
`

// TestJoinedPiecesCrossRedacted: a script can join pieces of a secret
// itself (the documented limit), but whatever it hands a builtin comes
// back redacted, the containers it holds (lists, dicts, a list holding
// itself) redacted in place, what it sends the application (path, query,
// body, headers) is redacted, and what it returns reaches the model
// redacted.
func TestJoinedPiecesCrossRedacted(t *testing.T) {
	var mu sync.Mutex // guards sent
	var sent []string
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			sent = append(sent, r.URL.String(), r.Header.Get("X-Note"), string(body))
			mu.Unlock()
			return
		}
		w.Write([]byte(splitBy(secret40, "", "|", "")))
	}))
	defer app.Close()
	tools, err := script.Parse("join.star", joinStar, script.BaseURL(app.URL), script.Header("X-Api-Key", secret40))
	if err != nil {
		t.Fatal(err)
	}
	out, err := tools[0].Call(context.Background(), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if reverse(got["held"]) != secret40 {
		t.Errorf("held = %q: the test no longer joins the secret in the script", reverse(got["held"]))
	}
	if got["out"] != "[redacted]" {
		t.Errorf("the tool returned %q to the model, want [redacted]", got["out"])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 6 {
		t.Fatalf("the application got %q, want two requests", sent)
	}
	for _, s := range sent {
		if form := secretIn(s); form != "" {
			t.Errorf("the script sent the application the secret (%s): %q", form, s)
		}
	}
	for _, way := range []string{"text", "re", "error", "dict", "list"} {
		s := reverse(got[way])
		if form := secretIn(s); form != "" || !strings.Contains(s, "[redacted]") {
			t.Errorf("%s: the script read %q, want the secret redacted", way, s)
		}
	}
}
