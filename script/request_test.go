package script_test

import (
	"strings"
	"testing"
)

func TestBodyDictOrListIsJSON(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def send(kind):
    """Sends a body of a kind."""
    if kind == "dict":
        echo = request("POST", "/echo", body={"text": "hi", "n": 1}).json()
    elif kind == "list":
        echo = request("PUT", "/echo", None, [1, "two", None]).json()
    elif kind == "string":
        echo = request("POST", "/echo", body='{"as": "it is"}').json()
    elif kind == "typed":
        echo = request("POST", "/echo", body={"a": 1}, headers={"Content-Type": "application/vnd.api+json"}).json()
    else:
        echo = request("POST", "/echo", json={"old": True}).json()
    return [echo["body"], echo["headers"]["Content-Type"][0]]
`)
	for _, tc := range []struct{ kind, want string }{
		{"dict", `["{\"n\":1,\"text\":\"hi\"}","application/json"]`},
		{"list", `["[1,\"two\",null]","application/json"]`},
		{"string", `["{\"as\": \"it is\"}","text/plain; charset=utf-8"]`},
		{"typed", `["{\"a\":1}","application/vnd.api+json"]`},
		{"json=", `["{\"old\":true}","application/json"]`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			if got := mustCall(t, tools, "send", `{"kind":"`+tc.kind+`"}`); got != tc.want {
				t.Errorf("= %s, want %s", got, tc.want)
			}
		})
	}
	tools = a.parse(t, `
def bad():
    """Sends a number."""
    request("POST", "/echo", body=3)
`)
	if _, err := call(t, tools, "bad", `{}`); err == nil || !strings.Contains(err.Error(), "body= must be a string, bytes, a dict or a list") {
		t.Errorf("body=3: err = %v", err)
	}
}

func TestResponseHeadersLowerCase(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def follow():
    """Reads a redirect.

    onion:intent read
    """
    answer = request("GET", "/redirect")
    return {
        "status": answer.status,
        "get": answer.headers.get("location"),
        "index": answer.headers["location"],
        "any case": answer.headers["LOCATION"],
        "in": "location" in answer.headers,
        "missing": answer.headers.get("x-nothing", "none"),
        "lower": [k for k in answer.headers.keys() if k != k.lower()],
        "text": answer.text == answer.body and "elsewhere" in answer.text,
        "dict": dict(answer.headers)["location"],
        "encoded": "location" in json.decode(json.encode(answer.headers)),
    }

def parse():
    """Reads JSON.

    onion:intent read
    """
    answer = request("GET", "/echo")
    return [answer.json()["path"], answer.headers["content-type"], dig(answer.json(), "method")]
`)
	want := `{"any case":"/elsewhere","dict":"/elsewhere","encoded":true,"get":"/elsewhere","in":true,"index":"/elsewhere","lower":[],"missing":"none","status":302,"text":true}`
	if got := mustCall(t, tools, "follow", `{}`); got != want {
		t.Errorf("follow = %s\nwant     %s", got, want)
	}
	if got := mustCall(t, tools, "parse", `{}`); got != `["/echo","application/json","GET"]` {
		t.Errorf("parse = %s", got)
	}
}
