package script_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
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
    """Joins pieces of an echo.

    onion:intent read
    """
    joined = request("GET", "/").text.replace("|", "")
    d = {joined: joined}
    l = [joined, (joined, 1), d]
    l.append(l)
    dig(l)
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
// itself) redacted in place, and what it returns reaches the model
// redacted.
func TestJoinedPiecesCrossRedacted(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	for _, way := range []string{"text", "re", "error", "dict", "list"} {
		s := reverse(got[way])
		if form := secretIn(s); form != "" || !strings.Contains(s, "[redacted]") {
			t.Errorf("%s: the script read %q, want the secret redacted", way, s)
		}
	}
}
